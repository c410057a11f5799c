//! (1) The loaded library is the ABI this binding was written for, and says so consistently.

use nnrt::json::Value;
use nnrt::{DType, Status};

use crate::common::context;

#[test]
fn abi_matches_the_binding() {
    assert_eq!(nnrt::abi_version(), nnrt::ABI_VERSION);
    assert_eq!(nnrt::ABI_VERSION, 1);
    nnrt::check_abi().expect("the loaded library has the binding's ABI");
}

#[test]
fn version_string_is_major_minor_patch() {
    let version = nnrt::version();
    let parts: Vec<u32> = version.split('.').map(|p| p.parse().expect("numeric version parts")).collect();
    assert_eq!(parts.len(), 3, "{version}");
    // Same major (and, for a 0.x library, same minor) as the header the binding follows.
    assert!(nnrt::HEADER_VERSION.starts_with(&format!("{}.{}.", parts[0], parts[1])), "{version}");
}

#[test]
fn context_description_reports_the_same_versions() {
    let description = Value::parse(&context().describe().unwrap()).unwrap();
    assert_eq!(description["abi"].as_i64(), Some(nnrt::ABI_VERSION as i64));
    assert_eq!(description["version"].as_str(), Some(nnrt::version()));
    let backends = description["backends"].as_array().expect("a list of backends");
    assert!(backends.iter().any(|b| b["name"].as_str() == Some("reference")), "{backends:?}");
    let selected = description["backend"].as_str().unwrap();
    assert!(backends.iter().any(|b| b["name"].as_str() == Some(selected) && b["selected"].as_bool() == Some(true)));
}

#[test]
fn status_names_and_dtype_sizes_come_from_the_library() {
    assert_eq!(Status::Shape.name(), "NNRT_ERR_SHAPE");
    assert_eq!(Status::Cancelled.name(), "NNRT_ERR_CANCELLED");
    assert_eq!(Status::DeadlineExceeded.name(), "NNRT_ERR_DEADLINE_EXCEEDED");
    assert_eq!(Status::Unknown(999).name(), "NNRT_ERR_UNKNOWN");
    for raw in 1..=13 {
        let status = Status::from_raw(raw).unwrap();
        assert_eq!(status.raw(), raw);
        assert!(!matches!(status, Status::Unknown(_)), "status {raw} is known to the header");
    }
    assert_eq!(Status::from_raw(0), None);
    let sizes: Vec<usize> = DType::ALL.iter().map(|t| t.size()).collect();
    assert_eq!(sizes, [4, 8, 2, 2, 4, 8, 1, 1, 1]);
    assert_eq!(DType::from_raw(99), None);
}
