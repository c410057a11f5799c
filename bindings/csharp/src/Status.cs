namespace Nnrt
{
    /// <summary>The status codes of the C API (nnrt_status). Values never change meaning; new ones are
    /// appended, so an unknown value may appear from a newer library.</summary>
    public enum Status
    {
        /// <summary>NNRT_OK: success.</summary>
        Ok = 0,
        /// <summary>NNRT_ERR_INVALID_ARGUMENT: NULL where not allowed, a bad value, an unknown JSON key or
        /// a handle of the wrong type.</summary>
        InvalidArgument = 1,
        /// <summary>NNRT_ERR_OUT_OF_MEMORY.</summary>
        OutOfMemory = 2,
        /// <summary>NNRT_ERR_SHAPE: shapes do not fit together; the message gives both.</summary>
        Shape = 3,
        /// <summary>NNRT_ERR_DTYPE: a dtype the operation does not accept.</summary>
        DType = 4,
        /// <summary>NNRT_ERR_UNSUPPORTED: a valid request this build or backend cannot do.</summary>
        Unsupported = 5,
        /// <summary>NNRT_ERR_BACKEND: a backend failed to load or failed at run time.</summary>
        Backend = 6,
        /// <summary>NNRT_ERR_NO_DEVICE: the requested device does not exist here.</summary>
        NoDevice = 7,
        /// <summary>NNRT_ERR_IO: a file could not be opened, read or written.</summary>
        Io = 8,
        /// <summary>NNRT_ERR_CORRUPT: a file or buffer is malformed, truncated or fails its checksum.</summary>
        Corrupt = 9,
        /// <summary>NNRT_ERR_VERSION: a file or plugin from an incompatible version.</summary>
        Version = 10,
        /// <summary>NNRT_ERR_CANCELLED: stopped by <see cref="Trainer.Cancel"/>, <see cref="RunOptions.Cancel"/>
        /// or a run options' abort callback.</summary>
        Cancelled = 11,
        /// <summary>NNRT_ERR_INTERNAL: a bug in nnrt; please report it with the message.</summary>
        Internal = 12,
        /// <summary>NNRT_ERR_DEADLINE_EXCEEDED: a call ran past its run options' timeout
        /// (<see cref="RunOptions.TimeoutSeconds"/>); the message gives the limit and the time it ran.</summary>
        DeadlineExceeded = 13,
    }
}
