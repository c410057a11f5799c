namespace Nnrt
{
    /// <summary>Element types of arrays (nnrt_dtype).</summary>
    public enum DType
    {
        /// <summary>32-bit float (C# float).</summary>
        F32 = 1,
        /// <summary>64-bit float (C# double).</summary>
        F64 = 2,
        /// <summary>IEEE 754 binary16, exchanged with the host as raw ushort bits.</summary>
        F16 = 3,
        /// <summary>bfloat16 (the upper half of an f32), exchanged as raw ushort bits.</summary>
        BF16 = 4,
        /// <summary>32-bit signed integer (C# int).</summary>
        I32 = 5,
        /// <summary>64-bit signed integer (C# long).</summary>
        I64 = 6,
        /// <summary>8-bit unsigned integer (C# byte).</summary>
        U8 = 7,
        /// <summary>One byte holding 0 or 1 (C# bool).</summary>
        Bool = 8,
        /// <summary>8-bit signed integer (C# sbyte): quantized weights (<see cref="Model.Quantize"/>);
        /// arrays of it are made, read, copied and cast, but arithmetic ops do not take it.</summary>
        I8 = 9,
    }

    /// <summary>Helpers for <see cref="DType"/>.</summary>
    public static class DTypes
    {
        /// <summary>The size in bytes of one element, as the library reports it (0 for an unknown value).</summary>
        public static int SizeOf(DType t) { return (int)Native.nnrt_dtype_size(t); }

        /// <summary>The name nnrt uses in JSON attributes ("f32", "bf16", "bool", ...).</summary>
        public static string JsonName(DType t)
        {
            switch (t)
            {
                case DType.F32: return "f32";
                case DType.F64: return "f64";
                case DType.F16: return "f16";
                case DType.BF16: return "bf16";
                case DType.I32: return "i32";
                case DType.I64: return "i64";
                case DType.U8: return "u8";
                case DType.Bool: return "bool";
                case DType.I8: return "i8";
                default: throw new System.ArgumentOutOfRangeException("t", t, "not an nnrt dtype");
            }
        }
    }
}
