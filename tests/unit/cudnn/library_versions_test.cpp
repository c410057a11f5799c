#include "library_versions.h"

#include <gtest/gtest.h>

namespace nnrt::cudnn {
namespace {

TEST(LibraryVersions, SplitsTheDecimalEncodings) {
  LibraryVersion v = cudnn_version_from_int(91900);
  EXPECT_EQ(v.major, 9);
  EXPECT_EQ(v.minor, 19);
  EXPECT_EQ(v.patch, 0);
  v = cublas_version_from_int(130102);
  EXPECT_EQ(version_text(v), "13.1.2");
}

TEST(LibraryVersions, SameMajorAndNoOlderMinorIsAccepted) {
  LibraryVersion built{9, 5, 1};
  EXPECT_EQ(version_problem("cuDNN", built, LibraryVersion{9, 5, 0}), "");  // patch does not matter
  EXPECT_EQ(version_problem("cuDNN", built, LibraryVersion{9, 19, 0}), "");
}

TEST(LibraryVersions, OlderMinorIsRefusedNamingBothVersions) {
  std::string m = version_problem("cuDNN", LibraryVersion{9, 5, 1}, LibraryVersion{9, 2, 0});
  EXPECT_NE(m.find("cuDNN 9.2.0"), std::string::npos) << m;
  EXPECT_NE(m.find("built for 9.5.1"), std::string::npos) << m;
  EXPECT_NE(m.find("older"), std::string::npos) << m;
}

TEST(LibraryVersions, OtherMajorIsRefusedNamingBothVersions) {
  std::string m = version_problem("cuBLASLt", LibraryVersion{13, 1, 0}, LibraryVersion{12, 9, 1});
  EXPECT_NE(m.find("cuBLASLt 12.9.1"), std::string::npos) << m;
  EXPECT_NE(m.find("13.1.0"), std::string::npos) << m;
  EXPECT_NE(m.find("major"), std::string::npos) << m;
  EXPECT_NE(version_problem("cuDNN", LibraryVersion{9, 0, 0}, LibraryVersion{10, 0, 0}), "");
}

}  // namespace
}  // namespace nnrt::cudnn
