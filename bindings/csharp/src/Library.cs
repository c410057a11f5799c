using System;
using System.Threading;

namespace Nnrt
{
    /// <summary>Log levels of nnrt's messages (NNRT_LOG_*).</summary>
    public enum LogLevel
    {
        /// <summary>NNRT_LOG_DEBUG.</summary>
        Debug = 0,
        /// <summary>NNRT_LOG_INFO.</summary>
        Info = 1,
        /// <summary>NNRT_LOG_WARN (the default minimum).</summary>
        Warn = 2,
        /// <summary>NNRT_LOG_ERROR.</summary>
        Error = 3,
    }

    /// <summary>Receives a log message. Called on whatever thread nnrt logs from (worker threads
    /// included); it must be quick and thread-safe, and must not call into nnrt. Exceptions it throws
    /// are dropped, since they cannot cross the native frames below it.</summary>
    public delegate void LogHandler(LogLevel level, string message);

    /// <summary>Process-wide facts about the loaded libnnrt: version, ABI, status names, logging.</summary>
    public static class Library
    {
        /// <summary>The ABI version (soname major) this binding was written against.</summary>
        public const uint ExpectedAbiVersion = 1;

        /// <summary>The ABI version the loaded library was built with (nnrt_abi_version).</summary>
        public static uint AbiVersion { get { return Load(Native.nnrt_abi_version); } }

        /// <summary>The library version, "MAJOR.MINOR.PATCH" (nnrt_version_string).</summary>
        public static string Version { get { return Utf8.Decode(Load(Native.nnrt_version_string)); } }

        /// <summary>The C name of a status, such as "NNRT_ERR_SHAPE" ("NNRT_ERR_UNKNOWN" for other values).</summary>
        public static string StatusName(Status status) { return Utf8.Decode(Native.nnrt_status_name(status)); }

        private static int checkedOnce;

        /// <summary>Loads the library and checks its ABI version, once per process; every
        /// <see cref="Context"/> calls it, so a missing or mismatched library fails at the first
        /// object made, with a message that says how the library is found.</summary>
        /// <exception cref="DllNotFoundException">libnnrt could not be loaded.</exception>
        /// <exception cref="NnrtException">Status Version: the library has another ABI version.</exception>
        public static void EnsureCompatible()
        {
            if (Volatile.Read(ref checkedOnce) != 0) return;
            uint abi = AbiVersion;
            if (abi != ExpectedAbiVersion)
                throw new NnrtException(Status.Version, string.Format(
                    "libnnrt has ABI version {0} but this binding was built for ABI version {1}",
                    abi, ExpectedAbiVersion));
            Volatile.Write(ref checkedOnce, 1);
        }

        /// <summary>Makes the first call into the library, turning a load failure into a message that
        /// says where the library was expected.</summary>
        private static T Load<T>(Func<T> firstCall)
        {
            try
            {
                return firstCall();
            }
            catch (DllNotFoundException e)
            {
                throw new DllNotFoundException(
                    "libnnrt could not be loaded (" + e.Message + "). Nnrt.dll.config next to Nnrt.dll maps " +
                    "\"nnrt\" to the library found at build time: rebuild with NNRT_LIB_DIR=<folder holding " +
                    "libnnrt.so> (or PKG_CONFIG_PATH), or put libnnrt.so on LD_LIBRARY_PATH. " +
                    "MONO_LOG_LEVEL=info MONO_LOG_MASK=dll shows the loader's reason.", e);
            }
        }

        // The one delegate handed to nnrt, created once and never collected, so nnrt can never call a
        // freed thunk, not even while a handler is being swapped on another thread.
        private static readonly Native.LogFn LogTrampoline = OnLog;
        private static volatile LogHandler logHandler;

        /// <summary>Sends nnrt's log messages of level minLevel and above to handler (process-wide), or
        /// back to the default, lines on stderr, when handler is null (nnrt_set_log_callback).</summary>
        public static void SetLogHandler(LogHandler handler, LogLevel minLevel)
        {
            if (handler == null)
            {
                Native.nnrt_set_log_callback(null, IntPtr.Zero, (int)minLevel);
                logHandler = null;
            }
            else
            {
                logHandler = handler;
                Native.nnrt_set_log_callback(LogTrampoline, IntPtr.Zero, (int)minLevel);
            }
        }

        private static void OnLog(int level, IntPtr message, IntPtr user)
        {
            var handler = logHandler;
            if (handler == null) return;
            try
            {
                handler((LogLevel)level, Utf8.Decode(message));
            }
            catch (Exception)
            {
                // An exception must not unwind through nnrt's frames; a log line is not worth dying for.
            }
        }
    }
}
