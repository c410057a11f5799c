using System;
using System.Runtime.InteropServices;

namespace Nnrt
{
    /// <summary>A typed n-dimensional array on a context's device (nnrt_array). Its dtype and shape never
    /// change; reading it from many threads at once is safe. Host data goes in and out by copy: a
    /// managed array is pinned only for the duration of the copying call.
    ///
    /// Arithmetic (the operators and the methods in NdArray.Ops.cs) returns new arrays; dispose them
    /// when done, or leave temporaries to the finalizer.</summary>
    public sealed partial class NdArray : IDisposable
    {
        /// <summary>The owned native handle.</summary>
        public ArrayHandle Handle { get; private set; }

        /// <summary>The context that ops on this array run on: the one it was created with.</summary>
        public Context Context { get; private set; }

        /// <summary>The element type.</summary>
        public DType DType { get; private set; }

        private readonly long[] shape;

        /// <summary>Wraps an owned handle and reads its dtype and shape once.</summary>
        internal NdArray(Context context, ArrayHandle handle)
        {
            Handle = handle;
            Context = context;
            DType dtype;
            int ndim;
            var dims = new long[8]; // NNRT_MAX_DIMS
            Check.Ok(Native.nnrt_array_info(handle, out dtype, out ndim, dims));
            DType = dtype;
            shape = new long[ndim];
            Array.Copy(dims, shape, ndim);
        }

        /// <summary>The largest rank of an array (NNRT_MAX_DIMS).</summary>
        public const int MaxDims = 8;

        /// <summary>The dimensions (a copy); empty for a scalar.</summary>
        public long[] Shape { get { return (long[])shape.Clone(); } }

        /// <summary>The number of dimensions; 0 for a scalar.</summary>
        public int Rank { get { return shape.Length; } }

        /// <summary>The number of elements: the product of the shape (1 for a scalar).</summary>
        public long ElementCount
        {
            get
            {
                long n = 1;
                foreach (long d in shape) n *= d;
                return n;
            }
        }

        /// <summary>The size in bytes, as the library reports it (nnrt_array_nbytes).</summary>
        public long ByteCount
        {
            get
            {
                UIntPtr n;
                Check.Ok(Native.nnrt_array_nbytes(Handle, out n));
                return (long)n.ToUInt64();
            }
        }

        /// <summary>A zero-filled array (nnrt_array_create); an empty shape makes a scalar.</summary>
        public static NdArray Zeros(Context context, DType dtype, params long[] shape)
        {
            ArrayHandle handle;
            Check.Ok(Native.nnrt_array_create(context.Handle, dtype, RankOf(shape), shape, out handle));
            return new NdArray(context, handle);
        }

        /// <summary>An F32 array holding a copy of data, row-major, with the given shape.</summary>
        public static unsafe NdArray FromHost(Context context, float[] data, params long[] shape)
        {
            fixed (float* p = NotNull(data)) return Copy(context, DType.F32, shape, (IntPtr)p, data.Length * 4L);
        }

        /// <summary>An F64 array holding a copy of data.</summary>
        public static unsafe NdArray FromHost(Context context, double[] data, params long[] shape)
        {
            fixed (double* p = NotNull(data)) return Copy(context, DType.F64, shape, (IntPtr)p, data.Length * 8L);
        }

        /// <summary>An I32 array holding a copy of data.</summary>
        public static unsafe NdArray FromHost(Context context, int[] data, params long[] shape)
        {
            fixed (int* p = NotNull(data)) return Copy(context, DType.I32, shape, (IntPtr)p, data.Length * 4L);
        }

        /// <summary>An I64 array holding a copy of data.</summary>
        public static unsafe NdArray FromHost(Context context, long[] data, params long[] shape)
        {
            fixed (long* p = NotNull(data)) return Copy(context, DType.I64, shape, (IntPtr)p, data.Length * 8L);
        }

        /// <summary>A U8 array holding a copy of data.</summary>
        public static unsafe NdArray FromHost(Context context, byte[] data, params long[] shape)
        {
            fixed (byte* p = NotNull(data)) return Copy(context, DType.U8, shape, (IntPtr)p, data.Length);
        }

        /// <summary>An I8 array holding a copy of data (quantized weights, for <see cref="Model.SetParam"/>).</summary>
        public static unsafe NdArray FromHost(Context context, sbyte[] data, params long[] shape)
        {
            fixed (sbyte* p = NotNull(data)) return Copy(context, DType.I8, shape, (IntPtr)p, data.Length);
        }

        /// <summary>A BOOL array holding a copy of data (a managed bool is one byte, 0 or 1, as nnrt's).</summary>
        public static unsafe NdArray FromHost(Context context, bool[] data, params long[] shape)
        {
            fixed (bool* p = NotNull(data)) return Copy(context, DType.Bool, shape, (IntPtr)p, data.Length);
        }

        /// <summary>An F16 or BF16 array from raw 16-bit patterns (.NET on Mono has no half type).</summary>
        public static unsafe NdArray FromHost(Context context, DType dtype, ushort[] bits, params long[] shape)
        {
            if (dtype != DType.F16 && dtype != DType.BF16)
                throw new ArgumentException("16-bit patterns make F16 or BF16 arrays, not " + dtype, "dtype");
            fixed (ushort* p = NotNull(bits)) return Copy(context, dtype, shape, (IntPtr)p, bits.Length * 2L);
        }

        /// <summary>An array of any dtype from its raw row-major bytes (little-endian elements).</summary>
        public static unsafe NdArray FromRawBytes(Context context, DType dtype, byte[] raw, params long[] shape)
        {
            fixed (byte* p = NotNull(raw)) return Copy(context, dtype, shape, (IntPtr)p, raw.Length);
        }

        /// <summary>The elements of an F32 array.</summary>
        public unsafe float[] ToFloatArray()
        {
            var data = new float[Count(DType.F32, "float[]")];
            fixed (float* p = data) CopyOut((IntPtr)p, data.Length * 4L);
            return data;
        }

        /// <summary>The elements of an F64 array.</summary>
        public unsafe double[] ToDoubleArray()
        {
            var data = new double[Count(DType.F64, "double[]")];
            fixed (double* p = data) CopyOut((IntPtr)p, data.Length * 8L);
            return data;
        }

        /// <summary>The elements of an I32 array.</summary>
        public unsafe int[] ToInt32Array()
        {
            var data = new int[Count(DType.I32, "int[]")];
            fixed (int* p = data) CopyOut((IntPtr)p, data.Length * 4L);
            return data;
        }

        /// <summary>The elements of an I64 array.</summary>
        public unsafe long[] ToInt64Array()
        {
            var data = new long[Count(DType.I64, "long[]")];
            fixed (long* p = data) CopyOut((IntPtr)p, data.Length * 8L);
            return data;
        }

        /// <summary>The elements of a U8 array.</summary>
        public unsafe byte[] ToByteArray()
        {
            var data = new byte[Count(DType.U8, "byte[]")];
            fixed (byte* p = data) CopyOut((IntPtr)p, data.Length);
            return data;
        }

        /// <summary>The elements of an I8 array.</summary>
        public unsafe sbyte[] ToSByteArray()
        {
            var data = new sbyte[Count(DType.I8, "sbyte[]")];
            fixed (sbyte* p = data) CopyOut((IntPtr)p, data.Length);
            return data;
        }

        /// <summary>The elements of a BOOL array.</summary>
        public unsafe bool[] ToBoolArray()
        {
            var data = new bool[Count(DType.Bool, "bool[]")];
            fixed (bool* p = data) CopyOut((IntPtr)p, data.Length);
            return data;
        }

        /// <summary>The raw 16-bit patterns of an F16 or BF16 array.</summary>
        public unsafe ushort[] ToUInt16Array()
        {
            if (DType != DType.F16 && DType != DType.BF16)
                throw new NnrtException(Status.DType, "ushort[] reads F16 or BF16 arrays; this one is " + DType);
            var data = new ushort[checked((int)ElementCount)];
            fixed (ushort* p = data) CopyOut((IntPtr)p, data.Length * 2L);
            return data;
        }

        /// <summary>The raw row-major bytes of an array of any dtype.</summary>
        public unsafe byte[] ToRawBytes()
        {
            var data = new byte[checked((int)ByteCount)];
            fixed (byte* p = data) CopyOut((IntPtr)p, data.Length);
            return data;
        }

        /// <summary>"NdArray(F32, [2, 3])".</summary>
        public override string ToString()
        {
            return "NdArray(" + DType + ", [" + string.Join(", ", shape) + "])";
        }

        /// <summary>Releases this reference to the array.</summary>
        public void Dispose() { Handle.Dispose(); }

        private static int RankOf(long[] shape)
        {
            if (shape == null) throw new ArgumentNullException("shape");
            return shape.Length;
        }

        private static T[] NotNull<T>(T[] data)
        {
            if (data == null) throw new ArgumentNullException("data");
            return data;
        }

        // nnrt copies `nbytes` from `data` before returning and keeps no pointer, so the caller's
        // `fixed` block is long enough.
        private static NdArray Copy(Context context, DType dtype, long[] shape, IntPtr data, long nbytes)
        {
            ArrayHandle handle;
            Check.Ok(Native.nnrt_array_from_host(context.Handle, dtype, RankOf(shape), shape, data,
                                                 (UIntPtr)(ulong)nbytes, out handle));
            return new NdArray(context, handle);
        }

        private void CopyOut(IntPtr data, long nbytes)
        {
            Check.Ok(Native.nnrt_array_to_host(Handle, data, (UIntPtr)(ulong)nbytes));
        }

        // The C call checks only the byte count, and F32 and I32 have the same size, so the binding
        // checks the element type itself before reading.
        private int Count(DType expected, string into)
        {
            if (DType != expected)
                throw new NnrtException(Status.DType, string.Format(
                    "cannot read a {0} array into {1}, which holds {2}; cast it first", DType, into, expected));
            return checked((int)ElementCount);
        }
    }
}
