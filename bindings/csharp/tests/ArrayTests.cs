using System;
using System.Linq;

namespace Nnrt.Tests
{
    /// <summary>Arrays of every dtype in and out, and array math with exact results.</summary>
    public static class ArrayTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        private static void CheckInfo(NdArray a, DType dtype, long[] shape, long bytes)
        {
            Assert.Equal(dtype, a.DType, "dtype");
            Assert.Sequence(shape, a.Shape, "shape");
            Assert.Equal(shape.Length, a.Rank, "rank");
            Assert.Equal(bytes, a.ByteCount, "bytes");
        }

        /// <summary>Every dtype goes to the device and back unchanged, with its dtype, shape and size.</summary>
        [Test]
        public static void EveryDTypeRoundTrips()
        {
            using (var a = NdArray.FromHost(Ctx, new[] { 1.5f, -2f, 3.25f, 1e-30f, float.MaxValue, 0f }, 2, 3))
            {
                CheckInfo(a, DType.F32, new long[] { 2, 3 }, 24);
                Assert.Sequence(new[] { 1.5f, -2f, 3.25f, 1e-30f, float.MaxValue, 0f }, a.ToFloatArray(), "f32");
            }
            using (var a = NdArray.FromHost(Ctx, new[] { Math.PI, -1e300 }, 2))
            {
                CheckInfo(a, DType.F64, new long[] { 2 }, 16);
                Assert.Sequence(new[] { Math.PI, -1e300 }, a.ToDoubleArray(), "f64");
            }
            using (var a = NdArray.FromHost(Ctx, new[] { int.MinValue, -1, 0, int.MaxValue }, 2, 1, 2))
            {
                CheckInfo(a, DType.I32, new long[] { 2, 1, 2 }, 16);
                Assert.Sequence(new[] { int.MinValue, -1, 0, int.MaxValue }, a.ToInt32Array(), "i32");
            }
            using (var a = NdArray.FromHost(Ctx, new[] { long.MinValue, 42L, long.MaxValue }, 3))
            {
                CheckInfo(a, DType.I64, new long[] { 3 }, 24);
                Assert.Sequence(new[] { long.MinValue, 42L, long.MaxValue }, a.ToInt64Array(), "i64");
            }
            using (var a = NdArray.FromHost(Ctx, new byte[] { 0, 7, 255 }, 3))
            {
                CheckInfo(a, DType.U8, new long[] { 3 }, 3);
                Assert.Sequence(new byte[] { 0, 7, 255 }, a.ToByteArray(), "u8");
            }
            using (var a = NdArray.FromHost(Ctx, new sbyte[] { -128, -1, 0, 127 }, 2, 2))
            {
                CheckInfo(a, DType.I8, new long[] { 2, 2 }, 4);
                Assert.Sequence(new sbyte[] { -128, -1, 0, 127 }, a.ToSByteArray(), "i8");
            }
            using (var a = NdArray.FromHost(Ctx, new[] { true, false, true, true }, 4))
            {
                CheckInfo(a, DType.Bool, new long[] { 4 }, 4);
                Assert.Sequence(new[] { true, false, true, true }, a.ToBoolArray(), "bool");
            }
            var halves = new ushort[] { 0x3C00, 0xC000, 0x7BFF, 0x0001 }; // 1, -2, 65504, the smallest subnormal
            using (var a = NdArray.FromHost(Ctx, DType.F16, halves, 2, 2))
            {
                CheckInfo(a, DType.F16, new long[] { 2, 2 }, 8);
                Assert.Sequence(halves, a.ToUInt16Array(), "f16");
            }
            var brains = new ushort[] { 0x3F80, 0xC000, 0x7F7F }; // 1, -2, the largest finite
            using (var a = NdArray.FromHost(Ctx, DType.BF16, brains, 3))
            {
                CheckInfo(a, DType.BF16, new long[] { 3 }, 6);
                Assert.Sequence(brains, a.ToUInt16Array(), "bf16");
            }
            var raw = BitConverter.GetBytes(3).Concat(BitConverter.GetBytes(-4)).ToArray();
            using (var a = NdArray.FromRawBytes(Ctx, DType.I32, raw, 2))
            {
                Assert.Sequence(new[] { 3, -4 }, a.ToInt32Array(), "raw i32");
                Assert.Sequence(raw, a.ToRawBytes(), "raw bytes");
            }
        }

        /// <summary>Zero-filled arrays, scalars (rank 0) and empty arrays (a zero dimension).</summary>
        [Test]
        public static void ZerosScalarsAndEmptyArrays()
        {
            using (var z = NdArray.Zeros(Ctx, DType.I64, 2, 3))
                Assert.Sequence(new long[6], z.ToInt64Array(), "zeros");
            using (var s = NdArray.FromHost(Ctx, new[] { 2.5 }))
            {
                CheckInfo(s, DType.F64, new long[0], 8);
                Assert.Equal(1L, s.ElementCount, "scalar elements");
                Assert.Sequence(new[] { 2.5 }, s.ToDoubleArray(), "scalar");
            }
            using (var e = NdArray.FromHost(Ctx, new float[0], 0, 3))
            {
                CheckInfo(e, DType.F32, new long[] { 0, 3 }, 0);
                Assert.Equal(0, e.ToFloatArray().Length, "empty elements");
            }
        }

        /// <summary>Elementwise arithmetic with numpy broadcasting, exact on small integers and halves.</summary>
        [Test]
        public static void ArithmeticIsExact()
        {
            using (var a = NdArray.FromHost(Ctx, new[] { 1f, 2f, 3f, 4f, 5f, 6f }, 2, 3))
            using (var b = NdArray.FromHost(Ctx, new[] { 10f, 20f, 40f }, 3))
            {
                Assert.Sequence(new[] { 11f, 22f, 43f, 14f, 25f, 46f }, (a + b).ToFloatArray(), "a + b");
                Assert.Sequence(new[] { 9f, 18f, 37f, 6f, 15f, 34f }, (b - a).ToFloatArray(), "b - a");
                Assert.Sequence(new[] { 10f, 40f, 120f, 40f, 100f, 240f }, (a * b).ToFloatArray(), "a * b");
                Assert.Sequence(new[] { 0.1f, 0.1f, 3f / 40f, 0.4f, 0.25f, 0.15f }, (a / b).ToFloatArray(), "a / b");
                Assert.Sequence(new[] { -1f, -2f, -3f, -4f, -5f, -6f }, (-a).ToFloatArray(), "-a");
                Assert.Sequence(new[] { 10f, 20f, 40f, 10f, 20f, 40f }, a.Maximum(b).ToFloatArray(), "maximum");
                Assert.Sequence(new[] { 1f, 2f, 3f, 4f, 5f, 6f }, a.Minimum(b).ToFloatArray(), "minimum");
                Assert.Sequence(new long[] { 2, 3 }, (a + b).Shape, "broadcast shape");
            }
            using (var i = NdArray.FromHost(Ctx, new[] { -3, 0, 7 }, 3))
            {
                Assert.Sequence(new[] { -6, 0, 14 }, i.Add(i).ToInt32Array(), "i32 add");
                Assert.Sequence(new[] { 3, 0, 7 }, i.Abs().ToInt32Array(), "i32 abs");
                Assert.Sequence(new[] { 3, 0, -7 }, i.Neg().ToInt32Array(), "i32 neg");
                Assert.Sequence(new[] { 4 }, i.Sum().ToInt32Array(), "i32 sum");
            }
        }

        /// <summary>Unary functions at points where the result is exact.</summary>
        [Test]
        public static void UnaryFunctions()
        {
            using (var x = NdArray.FromHost(Ctx, new[] { -1f, 0f, 4f }, 3))
            {
                Assert.Sequence(new[] { 0f, 0f, 4f }, x.Relu().ToFloatArray(), "relu");
                Assert.Sequence(new[] { 1f, 0f, 4f }, x.Abs().ToFloatArray(), "abs");
                Assert.Equal(2f, x.Sqrt().ToFloatArray()[2], "sqrt(4)");
                Assert.Equal(1f, x.Exp().ToFloatArray()[1], "exp(0)");
                Assert.Equal(0.5f, x.Sigmoid().ToFloatArray()[1], "sigmoid(0)");
                Assert.Equal(0f, x.Tanh().ToFloatArray()[1], "tanh(0)");
                Assert.Equal(0f, x.Gelu().ToFloatArray()[1], "gelu(0)");
                Assert.Equal(-0.5f, x.LeakyRelu(0.5).ToFloatArray()[0], "leaky_relu(-1)");
                Assert.Equal(4f, x.Elu().ToFloatArray()[2], "elu(4)");
            }
            using (var one = NdArray.FromHost(Ctx, new[] { 1.0 }, 1))
                Assert.Equal(0.0, one.Log().ToDoubleArray()[0], "log(1)");
        }

        /// <summary>Matrix products, plain and transposed.</summary>
        [Test]
        public static void MatMulIsExact()
        {
            using (var a = NdArray.FromHost(Ctx, new[] { 1f, 2f, 3f, 4f, 5f, 6f }, 2, 3))
            using (var b = NdArray.FromHost(Ctx, new[] { 7f, 8f, 9f, 10f, 11f, 12f }, 3, 2))
            {
                using (var c = a.MatMul(b))
                {
                    Assert.Sequence(new long[] { 2, 2 }, c.Shape, "shape");
                    Assert.Sequence(new[] { 58f, 64f, 139f, 154f }, c.ToFloatArray(), "a b");
                }
                using (var c = a.MatMul(a, transposeB: true))
                    Assert.Sequence(new[] { 14f, 32f, 32f, 77f }, c.ToFloatArray(), "a a^T");
                using (var c = a.MatMul(a, transposeA: true))
                    Assert.Sequence(new[] { 17f, 22f, 27f, 22f, 29f, 36f, 27f, 36f, 45f }, c.ToFloatArray(), "a^T a");
            }
        }

        /// <summary>Reductions over all or some axes, argmax and softmax.</summary>
        [Test]
        public static void Reductions()
        {
            using (var a = NdArray.FromHost(Ctx, new[] { 1f, 5f, 3f, 4f, 2f, 6f }, 2, 3))
            {
                Assert.Sequence(new[] { 21f }, a.Sum().ToFloatArray(), "sum");
                Assert.Sequence(new[] { 9f, 12f }, a.Sum(new long[] { 1 }).ToFloatArray(), "sum axis 1");
                Assert.Sequence(new long[] { 2, 1 }, a.Sum(new long[] { -1 }, keepDims: true).Shape, "keepdims");
                Assert.Sequence(new[] { 3.5f }, a.Mean().ToFloatArray(), "mean");
                Assert.Sequence(new[] { 4f, 5f, 6f }, a.Max(new long[] { 0 }).ToFloatArray(), "max axis 0");
                Assert.Sequence(new[] { 1f, 2f }, a.Min(new long[] { 1 }).ToFloatArray(), "min axis 1");
                using (var arg = a.ArgMax())
                {
                    Assert.Equal(DType.I64, arg.DType, "argmax dtype");
                    Assert.Sequence(new long[] { 1, 2 }, arg.ToInt64Array(), "argmax");
                }
                float[] p = a.Softmax().ToFloatArray();
                Assert.True(Math.Abs(p[0] + p[1] + p[2] - 1) < 1e-6, "softmax row sums to 1");
                float[] lp = a.LogSoftmax().ToFloatArray();
                Assert.True(Math.Abs(Math.Exp(lp[3]) - p[3]) < 1e-6, "log_softmax matches softmax");
            }
        }

        /// <summary>Casts round and truncate as documented; reshape and transpose move elements.</summary>
        [Test]
        public static void CastReshapeTranspose()
        {
            using (var x = NdArray.FromHost(Ctx, new[] { 1.7f, -1.7f, 1f, -2f, 0.5f, 65504f }, 6))
            {
                Assert.Sequence(new[] { 1, -1, 1, -2, 0, 65504 }, x.Cast(DType.I32).ToInt32Array(), "to i32");
                using (var h = x.Cast(DType.F16))
                {
                    ushort[] bits = h.ToUInt16Array();
                    Assert.Sequence(new ushort[] { 0x3C00, 0xC000, 0x3800, 0x7BFF },
                                    new[] { bits[2], bits[3], bits[4], bits[5] }, "to f16");
                    Assert.Sequence(new[] { 1f, -2f, 0.5f, 65504f }, h.Cast(DType.F32).ToFloatArray().Skip(2), "f16 back");
                }
                ushort[] b = x.Cast(DType.BF16).ToUInt16Array();
                Assert.Sequence(new ushort[] { 0x3F80, 0xC000, 0x3F00 }, new[] { b[2], b[3], b[4] }, "to bf16");
                Assert.Sequence(new[] { 1.7, -1.7, 1, -2, 0.5, 65504 }.Select(v => (double)(float)v),
                                x.Cast(DType.F64).ToDoubleArray(), "to f64");
            }
            using (var a = NdArray.FromHost(Ctx, new[] { 1f, 2f, 3f, 4f, 5f, 6f }, 2, 3))
            {
                using (var r = a.Reshape(3, -1))
                {
                    Assert.Sequence(new long[] { 3, 2 }, r.Shape, "reshape shape");
                    Assert.Sequence(a.ToFloatArray(), r.ToFloatArray(), "reshape keeps order");
                }
                using (var t = a.Transpose())
                {
                    Assert.Sequence(new long[] { 3, 2 }, t.Shape, "transpose shape");
                    Assert.Sequence(new[] { 1f, 4f, 2f, 5f, 3f, 6f }, t.ToFloatArray(), "transpose");
                }
                Assert.Sequence(new[] { 1f, 4f, 2f, 5f, 3f, 6f }, a.Transpose(1, 0).ToFloatArray(), "transpose perm");
            }
        }

        /// <summary>Convolution and pooling on tiny NCHW inputs.</summary>
        [Test]
        public static void ConvolutionAndPooling()
        {
            var image = Enumerable.Range(0, 16).Select(v => (float)v).ToArray();
            using (var x = NdArray.FromHost(Ctx, image, 1, 1, 4, 4))
            {
                Assert.Sequence(new[] { 5f, 7f, 13f, 15f }, x.MaxPool2d(new long[] { 2, 2 }).ToFloatArray(), "maxpool");
                Assert.Sequence(new[] { 2.5f, 4.5f, 10.5f, 12.5f }, x.AvgPool2d(new long[] { 2, 2 }).ToFloatArray(), "avgpool");
                using (var w = NdArray.FromHost(Ctx, new[] { 1f, 1f, 1f, 1f }, 1, 1, 2, 2))
                using (var bias = NdArray.FromHost(Ctx, new[] { 100f }, 1))
                {
                    using (var y = x.Conv2d(w, stride: new long[] { 2, 2 }))
                    {
                        Assert.Sequence(new long[] { 1, 1, 2, 2 }, y.Shape, "conv shape");
                        Assert.Sequence(new[] { 10f, 18f, 42f, 50f }, y.ToFloatArray(), "conv");
                    }
                    using (var y = x.Conv2d(w, bias, stride: new long[] { 2, 2 }))
                        Assert.Sequence(new[] { 110f, 118f, 142f, 150f }, y.ToFloatArray(), "conv + bias");
                }
            }
        }

        /// <summary>fill, and seeded random numbers that repeat for the same seed.</summary>
        [Test]
        public static void CreationOps()
        {
            using (var f = Ctx.Fill(2.5, DType.F64, 2, 2))
                Assert.Sequence(new[] { 2.5, 2.5, 2.5, 2.5 }, f.ToDoubleArray(), "fill");
            using (var u1 = Ctx.RandomUniform(new long[] { 1000 }, seed: 42, low: -1, high: 3))
            using (var u2 = Ctx.RandomUniform(new long[] { 1000 }, seed: 42, low: -1, high: 3))
            using (var u3 = Ctx.RandomUniform(new long[] { 1000 }, seed: 43, low: -1, high: 3))
            {
                float[] a = u1.ToFloatArray();
                Assert.Sequence(a, u2.ToFloatArray(), "same seed, same numbers");
                Assert.True(!a.SequenceEqual(u3.ToFloatArray()), "another seed, other numbers");
                Assert.True(a.All(v => v >= -1 && v < 3), "uniform in [low, high)");
            }
            using (var n = Ctx.RandomNormal(new long[] { 4000 }, seed: 1, mean: 5, std: 2, dtype: DType.F64))
            {
                double mean = n.ToDoubleArray().Average();
                Assert.True(Math.Abs(mean - 5) < 0.2, "normal mean " + mean);
            }
        }

        /// <summary>The generic Op entry point reaches ops by name, with JSON attributes.</summary>
        [Test]
        public static void GenericOpByName()
        {
            using (var a = NdArray.FromHost(Ctx, new[] { 1f, 2f, 3f, 4f }, 2, 2))
            {
                NdArray[] outs = Ctx.Op("sum", new[] { a }, "{\"axes\": [0]}", 1);
                Assert.Equal(1, outs.Length, "outputs");
                Assert.Sequence(new[] { 4f, 6f }, outs[0].ToFloatArray(), "sum axes [0]");
                using (var z = Ctx.Op("fill", "{\"shape\": [2], \"value\": 7, \"dtype\": \"i64\"}"))
                    Assert.Sequence(new long[] { 7, 7 }, z.ToInt64Array(), "fill by name");
            }
        }
    }
}
