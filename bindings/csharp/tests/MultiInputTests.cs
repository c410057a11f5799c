using System;
using System.Collections.Generic;
using System.Linq;

namespace Nnrt.Tests
{
    /// <summary>Models of several inputs and outputs (a config's "inputs" and "outputs"): Inputs,
    /// OutputCount and PredictMany, with an attention mask.</summary>
    public static class MultiInputTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        private const int Tokens = 6, Features = 8, Classes = 3;

        /// <summary>Token ids and a key mask ("keep": 0 marks padding) into an embedding and self-attention,
        /// with two outputs: the class probabilities and the attention's output.</summary>
        public const string MaskedAttention = @"{""inputs"": [{""name"": ""ids"", ""shape"": [6]},
                {""name"": ""attention_mask"", ""shape"": [6]}], ""seed"": 3, ""nodes"": [
            {""name"": ""emb"", ""type"": ""embedding"", ""inputs"": [""ids""], ""vocab"": 11, ""units"": 8},
            {""name"": ""attn"", ""type"": ""multi_head_attention"", ""inputs"": [""emb"", ""attention_mask""],
             ""heads"": 2, ""mask"": ""keep""},
            {""name"": ""out"", ""type"": ""output"", ""inputs"": [""attn""], ""units"": 3, ""loss"": ""nll""}],
            ""outputs"": [""out"", ""attn""]}";

        // Two examples of 6 tokens; ids below the vocabulary of 11.
        private static readonly long[] Ids = { 1, 4, 2, 7, 9, 3, 5, 10, 0, 6, 8, 2 };

        // Each example's last 2 tokens are padding.
        private static readonly long[] Mask = { 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0 };

        private static NdArray[] Run(Model model, long[] ids, long[] mask)
        {
            int n = ids.Length / Tokens;
            using (var x = NdArray.FromHost(Ctx, ids, n, Tokens))
            using (var m = NdArray.FromHost(Ctx, mask, n, Tokens))
                return model.PredictMany(new[] { x, m });
        }

        private static void DisposeAll(IEnumerable<NdArray> arrays)
        {
            foreach (var a in arrays) a.Dispose();
        }

        /// <summary>Inputs gives each input's name and example shape in the config's order; OutputCount the
        /// number of "outputs". A config with "input" has one input, named "input", and one output.</summary>
        [Test]
        public static void InputsAndOutputCount()
        {
            using (var model = new Model(Ctx, MaskedAttention))
            {
                var inputs = model.Inputs;
                Assert.Equal(2, inputs.Count, "input count");
                Assert.Equal("ids", inputs[0].Name, "input 0's name");
                Assert.Sequence(new long[] { Tokens }, inputs[0].Shape, "input 0's shape");
                Assert.Equal(0, inputs[0].Index, "input 0's index");
                Assert.Equal("attention_mask", inputs[1].Name, "input 1's name");
                Assert.Sequence(new long[] { Tokens }, inputs[1].Shape, "input 1's shape");
                Assert.Equal(1, inputs[1].Index, "input 1's index");
                Assert.Equal("attention_mask [6]", inputs[1].ToString(), "ToString");
                inputs[0].Shape[0] = 99;
                Assert.Sequence(new long[] { Tokens }, inputs[0].Shape, "Shape is a copy");
                Assert.Equal(2, model.OutputCount, "output count");
            }
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                var inputs = model.Inputs;
                Assert.Equal(1, inputs.Count, "a single-input model's input count");
                Assert.Equal("input", inputs[0].Name, "its input's name");
                Assert.Sequence(new long[] { 2 }, inputs[0].Shape, "its input's shape");
                Assert.Equal(1, model.OutputCount, "its output count");
            }
        }

        /// <summary>PredictMany gives every output with its shape; the probabilities of each example sum to
        /// 1; and the tokens the mask hides do not reach the other tokens' attention output at all: with
        /// different ids there, rows 0..3 of attn are the same bit for bit.</summary>
        [Test]
        public static void PredictManyWithAPaddingMask()
        {
            using (var model = new Model(Ctx, MaskedAttention))
            {
                NdArray[] first = Run(model, Ids, Mask);
                try
                {
                    Assert.Equal(2, first.Length, "outputs");
                    Assert.Sequence(new long[] { 2, Classes }, first[0].Shape, "out's shape");
                    Assert.Sequence(new long[] { 2, Tokens, Features }, first[1].Shape, "attn's shape");
                    Assert.Equal(DType.F32, first[0].DType, "out's dtype");
                    Assert.Equal(DType.F32, first[1].DType, "attn's dtype");

                    float[] p = first[0].ToFloatArray();
                    for (int e = 0; e < 2; e++)
                    {
                        double sum = 0;
                        for (int c = 0; c < Classes; c++)
                        {
                            float v = p[e * Classes + c];
                            Assert.True(v >= 0 && v <= 1, "example " + e + ": probability " + v + " outside [0, 1]");
                            sum += v;
                        }
                        Assert.True(Math.Abs(sum - 1) < 1e-5, "example " + e + ": probabilities sum to " + sum);
                    }

                    // Other ids at the masked positions 4 and 5 of each example.
                    var changedIds = (long[])Ids.Clone();
                    for (int e = 0; e < 2; e++)
                    {
                        changedIds[e * Tokens + 4] = (Ids[e * Tokens + 4] + 3) % 11;
                        changedIds[e * Tokens + 5] = (Ids[e * Tokens + 5] + 5) % 11;
                    }
                    NdArray[] second = Run(model, changedIds, Mask);
                    try
                    {
                        float[] a = first[1].ToFloatArray(), b = second[1].ToFloatArray();
                        for (int e = 0; e < 2; e++)
                        {
                            int start = e * Tokens * Features, rows = 4 * Features;
                            Assert.Sequence(a.Skip(start).Take(rows).Select(BitConverter.SingleToInt32Bits),
                                            b.Skip(start).Take(rows).Select(BitConverter.SingleToInt32Bits),
                                            "example " + e + ": attn rows 0..3 (bits) after changing masked ids");
                            Assert.True(!a.Skip(start + rows).Take(2 * Features).SequenceEqual(b.Skip(start + rows).Take(2 * Features)),
                                        "example " + e + ": the masked tokens' own rows did not change with their ids");
                        }
                    }
                    finally
                    {
                        DisposeAll(second);
                    }

                    // Without the mask those tokens do reach the others: the check above means something.
                    var keepAll = Enumerable.Repeat(1L, Mask.Length).ToArray();
                    NdArray[] unmasked = Run(model, Ids, keepAll), unmaskedChanged = Run(model, changedIds, keepAll);
                    try
                    {
                        Assert.True(!unmasked[1].ToFloatArray().Take(4 * Features)
                                        .SequenceEqual(unmaskedChanged[1].ToFloatArray().Take(4 * Features)),
                                    "unmasked, rows 0..3 of attn did not change with the ids at positions 4 and 5");
                    }
                    finally
                    {
                        DisposeAll(unmasked);
                        DisposeAll(unmaskedChanged);
                    }

                    // The same inputs again (the plan replayed) give the same numbers.
                    NdArray[] again = Run(model, Ids, Mask);
                    try
                    {
                        Assert.Sequence(first[0].ToFloatArray(), again[0].ToFloatArray(), "out, replayed");
                        Assert.Sequence(first[1].ToFloatArray(), again[1].ToFloatArray(), "attn, replayed");
                    }
                    finally
                    {
                        DisposeAll(again);
                    }
                }
                finally
                {
                    DisposeAll(first);
                }
            }
        }

        /// <summary>The overloads: the first outputs only, the inputs by name, run options.</summary>
        [Test]
        public static void PredictManyOverloads()
        {
            using (var model = new Model(Ctx, MaskedAttention))
            using (var ids = NdArray.FromHost(Ctx, Ids, 2, Tokens))
            using (var mask = NdArray.FromHost(Ctx, Mask, 2, Tokens))
            {
                NdArray[] all = model.PredictMany(new List<NdArray> { ids, mask });
                try
                {
                    NdArray[] one = model.PredictMany(new[] { ids, mask }, 1);
                    try
                    {
                        Assert.Equal(1, one.Length, "outputs asked for: 1");
                        Assert.Sequence(all[0].ToFloatArray(), one[0].ToFloatArray(), "the first output alone");
                    }
                    finally
                    {
                        DisposeAll(one);
                    }

                    var byName = new Dictionary<string, NdArray> { { "attention_mask", mask }, { "ids", ids } };
                    NdArray[] named = model.PredictMany(byName);
                    try
                    {
                        Assert.Equal(2, named.Length, "outputs by name");
                        Assert.Sequence(all[1].ToFloatArray(), named[1].ToFloatArray(), "attn, inputs by name");
                    }
                    finally
                    {
                        DisposeAll(named);
                    }

                    using (var options = new RunOptions(timeoutSeconds: 60))
                    {
                        NdArray[] timed = model.PredictMany(new[] { ids, mask }, options);
                        try
                        {
                            Assert.Sequence(all[0].ToFloatArray(), timed[0].ToFloatArray(), "out, with run options");
                        }
                        finally
                        {
                            DisposeAll(timed);
                        }
                        options.Cancel();
                        Assert.Fails(Status.Cancelled, () => model.PredictMany(new[] { ids, mask }, options), "cancelled");
                    }
                }
                finally
                {
                    DisposeAll(all);
                }

                Assert.Fails(Status.InvalidArgument,
                             () => model.PredictMany(new Dictionary<string, NdArray> { { "ids", ids }, { "mask", mask } }),
                             "a wrong name", "attention_mask", "mask");
            }
        }

        /// <summary>Predict refuses a model of several inputs, and PredictMany says what is wrong with its
        /// arguments; the inputs stay usable afterwards (the call dropped its references).</summary>
        [Test]
        public static void WrongCallsFail()
        {
            using (var model = new Model(Ctx, MaskedAttention))
            using (var ids = NdArray.FromHost(Ctx, Ids, 2, Tokens))
            using (var mask = NdArray.FromHost(Ctx, Mask, 2, Tokens))
            using (var shortMask = NdArray.FromHost(Ctx, Mask.Take(Tokens).ToArray(), 1, Tokens))
            {
                Assert.Fails(Status.InvalidArgument, () => model.Predict(ids), "Predict on a model of two inputs");
                using (var options = new RunOptions())
                    Assert.Fails(Status.InvalidArgument, () => model.Predict(ids, options), "Predict with options");
                Assert.Fails(Status.InvalidArgument, () => model.PredictMany(new[] { ids }), "one input of two");
                Assert.Fails(Status.InvalidArgument, () => model.PredictMany(new[] { ids, mask }, 0), "no outputs");
                Assert.Fails(Status.InvalidArgument, () => model.PredictMany(new[] { ids, mask }, 3), "three outputs of two");
                Assert.Fails(Status.Shape, () => model.PredictMany(new[] { ids, shortMask }), "different batch sizes");
                Assert.Throws<ArgumentNullException>(() => model.PredictMany(new[] { ids, null }), "a null input");
                Assert.Throws<ArgumentNullException>(() => model.PredictMany((IReadOnlyList<NdArray>)null), "null inputs");
                Assert.Fails(Status.Unsupported, () => new Trainer(model).Dispose(), "a trainer of a model of two inputs");

                NdArray[] outputs = model.PredictMany(new[] { ids, mask });
                DisposeAll(outputs);
                Assert.Sequence(Ids, ids.ToInt64Array(), "ids after the calls");

                mask.Dispose();
                Assert.Throws<ObjectDisposedException>(() => model.PredictMany(new[] { ids, mask }), "a disposed input");
            }
        }

        /// <summary>A model of one input runs through PredictMany too, with the numbers of Predict.</summary>
        [Test]
        public static void PredictManyOnASingleInputModel()
        {
            float[] x;
            long[] y;
            Fixtures.Blobs(5, 9, out x, out y);
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var input = NdArray.FromHost(Ctx, x, 5, 2))
            using (var expected = model.Predict(input))
            {
                NdArray[] outputs = model.PredictMany(new[] { input });
                try
                {
                    Assert.Equal(1, outputs.Length, "outputs");
                    Assert.Sequence(expected.Shape, outputs[0].Shape, "shape");
                    Assert.Sequence(expected.ToFloatArray(), outputs[0].ToFloatArray(), "values");
                }
                finally
                {
                    DisposeAll(outputs);
                }
            }
        }
    }
}
