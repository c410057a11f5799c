using System;
using System.Runtime.InteropServices;
using System.Text;

namespace Nnrt
{
    /// <summary>UTF-8 conversions for the C API's strings, done by hand so they never depend on the
    /// marshaler's charset handling (Mono 6.8 does not honour UnmanagedType.LPUTF8Str everywhere).</summary>
    internal static class Utf8
    {
        private static readonly UTF8Encoding Strict = new UTF8Encoding(false, true);

        /// <summary>The NUL-terminated UTF-8 bytes of s, or null for a null string (passed as NULL).</summary>
        internal static byte[] Encode(string s)
        {
            if (s == null) return null;
            if (s.IndexOf('\0') >= 0)
                throw new ArgumentException("a string passed to nnrt must not contain NUL characters");
            var bytes = new byte[Strict.GetByteCount(s) + 1];
            Strict.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }

        /// <summary>Copies a NUL-terminated UTF-8 string owned by nnrt ("" for NULL).</summary>
        internal static string Decode(IntPtr text)
        {
            if (text == IntPtr.Zero) return "";
            int length = 0;
            while (Marshal.ReadByte(text, length) != 0) length++;
            var bytes = new byte[length];
            Marshal.Copy(text, bytes, 0, length);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>A C function of the (buf, cap, len) string convention, bound to its object.</summary>
        internal delegate Status StringQuery(byte[] buf, UIntPtr cap, out UIntPtr len);

        /// <summary>Reads a string returned snprintf-style: asks for the size with cap = 0, then fills a
        /// buffer of that size plus the NUL. Loops if the text grew in between (describe reports live
        /// cache counters).</summary>
        internal static string Query(StringQuery query)
        {
            UIntPtr len;
            Check.Ok(query(null, UIntPtr.Zero, out len));
            while (true)
            {
                var buf = new byte[checked((int)len.ToUInt64() + 1)];
                UIntPtr full;
                Check.Ok(query(buf, (UIntPtr)buf.Length, out full));
                if (full.ToUInt64() < (ulong)buf.Length)
                    return Encoding.UTF8.GetString(buf, 0, (int)full.ToUInt64());
                len = full;
            }
        }
    }
}
