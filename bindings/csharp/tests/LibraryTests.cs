using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Text.RegularExpressions;

namespace Nnrt.Tests
{
    /// <summary>Version, ABI, status names, dtypes, describe, logging, and a missing library.</summary>
    public static class LibraryTests
    {
        /// <summary>The loaded library has the ABI this binding was written for.</summary>
        [Test]
        public static void AbiVersionMatches()
        {
            Assert.Equal(1u, Library.ExpectedAbiVersion, "the binding's ABI");
            Assert.Equal(Library.ExpectedAbiVersion, Library.AbiVersion, "the library's ABI");
            Library.EnsureCompatible();
        }

        /// <summary>The version string is MAJOR.MINOR.PATCH of the 0.x series.</summary>
        [Test]
        public static void VersionStringIsSemantic()
        {
            Assert.True(Regex.IsMatch(Library.Version, @"^0\.\d+\.\d+$"), "version " + Library.Version);
        }

        /// <summary>Every Status has the C name of the same value, and an unknown value has a name too.</summary>
        [Test]
        public static void StatusNamesMatchTheHeader()
        {
            var names = new Dictionary<Status, string>
            {
                { Status.Ok, "NNRT_OK" }, { Status.InvalidArgument, "NNRT_ERR_INVALID_ARGUMENT" },
                { Status.OutOfMemory, "NNRT_ERR_OUT_OF_MEMORY" }, { Status.Shape, "NNRT_ERR_SHAPE" },
                { Status.DType, "NNRT_ERR_DTYPE" }, { Status.Unsupported, "NNRT_ERR_UNSUPPORTED" },
                { Status.Backend, "NNRT_ERR_BACKEND" }, { Status.NoDevice, "NNRT_ERR_NO_DEVICE" },
                { Status.Io, "NNRT_ERR_IO" }, { Status.Corrupt, "NNRT_ERR_CORRUPT" },
                { Status.Version, "NNRT_ERR_VERSION" }, { Status.Cancelled, "NNRT_ERR_CANCELLED" },
                { Status.Internal, "NNRT_ERR_INTERNAL" }, { Status.DeadlineExceeded, "NNRT_ERR_DEADLINE_EXCEEDED" },
            };
            Assert.Equal(names.Count, Enum.GetValues(typeof(Status)).Length, "number of statuses");
            foreach (var pair in names) Assert.Equal(pair.Value, Library.StatusName(pair.Key), pair.Key.ToString());
            Assert.Equal("NNRT_ERR_UNKNOWN", Library.StatusName((Status)999), "an unknown status");
        }

        /// <summary>Element sizes as the library reports them.</summary>
        [Test]
        public static void DTypeSizes()
        {
            var sizes = new Dictionary<DType, int>
            {
                { DType.F32, 4 }, { DType.F64, 8 }, { DType.F16, 2 }, { DType.BF16, 2 },
                { DType.I32, 4 }, { DType.I64, 8 }, { DType.U8, 1 }, { DType.Bool, 1 }, { DType.I8, 1 },
            };
            foreach (var pair in sizes) Assert.Equal(pair.Value, DTypes.SizeOf(pair.Key), pair.Key.ToString());
            Assert.Equal(0, DTypes.SizeOf((DType)0), "an unknown dtype");
        }

        /// <summary>Describe returns the JSON the header promises.</summary>
        [Test]
        public static void ContextDescribesItself()
        {
            using (var context = new Context("{\"backend\": \"reference\", \"threads\": 1}"))
            {
                string json = context.Describe();
                Assert.Equal("reference", Fixtures.JsonField(json, "backend"), "backend");
                Assert.Equal("1", Fixtures.JsonField(json, "abi"), "abi");
                Assert.Equal("1", Fixtures.JsonField(json, "threads"), "threads");
                foreach (var key in new[] { "version", "backends", "plugins", "devices", "cache" })
                    Assert.Contains("\"" + key + "\"", json, "describe");
            }
        }

        /// <summary>A log handler receives nnrt's messages; null restores the default.</summary>
        [Test]
        public static void LogHandlerReceivesMessages()
        {
            var messages = new List<string>();
            Library.SetLogHandler((level, message) => { lock (messages) messages.Add(level + " " + message); },
                                  LogLevel.Debug);
            try
            {
                using (new Context()) { }
            }
            finally
            {
                Library.SetLogHandler(null, LogLevel.Warn);
            }
            lock (messages)
            {
                Assert.True(messages.Count > 0, "no log message while creating a context at debug level");
                Assert.True(messages.Exists(m => m.StartsWith("Debug ")), "debug messages: " + string.Join("; ", messages));
            }
        }

        /// <summary>With the library mapped to a path that does not exist, the first use fails with an
        /// error that says how the library is found, and the process exits non-zero.</summary>
        [Test]
        public static void MissingLibraryFailsLoudly()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string self = typeof(LibraryTests).Assembly.Location;
                string binding = typeof(Library).Assembly.Location;
                File.Copy(self, Path.Combine(dir, Path.GetFileName(self)));
                File.Copy(binding, Path.Combine(dir, Path.GetFileName(binding)));
                File.WriteAllText(Path.Combine(dir, "Nnrt.dll.config"),
                    "<configuration><dllmap dll=\"nnrt\" target=\"/nonexistent/libnnrt.so.1\"/></configuration>");

                var start = new ProcessStartInfo(Process.GetCurrentProcess().MainModule.FileName,
                                                 "\"" + Path.Combine(dir, Path.GetFileName(self)) + "\" --probe-library")
                {
                    UseShellExecute = false,
                    RedirectStandardOutput = true,
                    RedirectStandardError = true,
                };
                start.EnvironmentVariables["LD_LIBRARY_PATH"] = "";
                using (var child = Process.Start(start))
                {
                    string output = child.StandardOutput.ReadToEnd();
                    string errors = child.StandardError.ReadToEnd();
                    Assert.True(child.WaitForExit(60000), "the probe did not finish");
                    Assert.Equal(1, child.ExitCode, "exit code (stdout: " + output + ", stderr: " + errors + ")");
                    Assert.Contains("libnnrt could not be loaded", errors, "the probe's error");
                    Assert.Contains("NNRT_LIB_DIR", errors, "the probe's error");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }
    }
}
