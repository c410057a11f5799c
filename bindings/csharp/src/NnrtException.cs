using System;

namespace Nnrt
{
    /// <summary>A failed nnrt call: the <see cref="Status"/> it returned and the library's message
    /// (nnrt_last_error), which says what was expected and what was given.</summary>
    public class NnrtException : Exception
    {
        /// <summary>The status code of the failure; never <see cref="Nnrt.Status.Ok"/>.</summary>
        public Status Status { get; private set; }

        /// <summary>Creates the exception for a status and its message.</summary>
        public NnrtException(Status status, string message)
            : base(message)
        {
            Status = status;
        }

        /// <summary>Creates the exception for a status and its message, caused by another exception (an
        /// abort callback's that stopped the call).</summary>
        public NnrtException(Status status, string message, Exception innerException)
            : base(message, innerException)
        {
            Status = status;
        }

        /// <summary>"NNRT_ERR_SHAPE: message", as the C examples print it.</summary>
        public override string ToString()
        {
            string text = Library.StatusName(Status) + ": " + Message + Environment.NewLine + StackTrace;
            if (InnerException != null) text += Environment.NewLine + "caused by " + InnerException;
            return text;
        }
    }

    /// <summary>Turns statuses into exceptions.</summary>
    internal static class Check
    {
        /// <summary>Throws an <see cref="NnrtException"/> for any status but Ok.
        ///
        /// Must be called right after the failing call, on the same thread, with no nnrt call in
        /// between: nnrt_last_error() is thread-local and valid until this thread's next nnrt call.
        /// P/Invoke runs the native function on the calling thread, so "the thread that made the
        /// call" and "the thread reading the message" are the same one.</summary>
        internal static void Ok(Status status)
        {
            if (status != Status.Ok)
                throw new NnrtException(status, Utf8.Decode(Native.nnrt_last_error()));
        }
    }
}
