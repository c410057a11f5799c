//! `nnrt_op`: array math by name on a context's backend.

use crate::array::Array;
use crate::context::Context;
use crate::error::{Error, Result, Status, c_options, c_string, check, options_ptr};
use crate::sys;

impl Context {
    /// Runs the operation `name` on `inputs` and returns its single output, e.g.
    /// `ctx.op("matmul", &[&a, &b], r#"{"transpose_b": true}"#)`. `attrs_json` is a JSON object of
    /// attributes, or `""` for none. The ops and their attributes are listed at `nnrt_op` in nnrt.h
    /// (add, mul, exp, matmul, sum, softmax, cast, reshape, conv2d, fill, random_normal, ...); an
    /// unknown name is [`Status::Unsupported`].
    pub fn op(&self, name: &str, inputs: &[&Array], attrs_json: &str) -> Result<Array> {
        let mut outputs = self.op_n(name, inputs, attrs_json, 1)?;
        Ok(outputs.remove(0))
    }

    /// Runs the operation `name` and returns its `n_outputs` outputs, for ops with more than one.
    pub fn op_n(&self, name: &str, inputs: &[&Array], attrs_json: &str, n_outputs: usize) -> Result<Vec<Array>> {
        let name = c_string("op name", name)?;
        let attrs = c_options("attrs_json", attrs_json)?;
        let raw_inputs: Vec<*const sys::nnrt_array> = inputs.iter().map(|a| a.as_raw().cast_const()).collect();
        let mut raw_outputs = vec![std::ptr::null_mut(); n_outputs];
        let n_inputs = count("inputs", raw_inputs.len())?;
        let n_out = count("outputs", n_outputs)?;
        // SAFETY: every input is a live array borrowed for the call; raw_outputs has n_out slots.
        check(unsafe {
            sys::nnrt_op(
                self.as_raw(),
                name.as_ptr(),
                raw_inputs.as_ptr(),
                n_inputs,
                options_ptr(&attrs),
                raw_outputs.as_mut_ptr(),
                n_out,
            )
        })?;
        // Wrap every output before checking any, so none leaks if the library left one NULL.
        let wrapped: Vec<Option<Array>> = raw_outputs.into_iter().map(Array::from_raw).collect();
        wrapped
            .into_iter()
            .map(|a| a.ok_or_else(|| Error::new(Status::Internal, "nnrt_op returned NNRT_OK but left an output NULL")))
            .collect()
    }
}

fn count(what: &str, n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::new(Status::InvalidArgument, format!("{n} {what} do not fit an int32_t")))
}
