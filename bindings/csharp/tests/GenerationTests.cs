using System.Collections.Generic;
using System.Linq;

namespace Nnrt.Tests
{
    /// <summary>Generation from a token model: greedy, seeded sampling, the callback, bad input.</summary>
    public static class GenerationTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        /// <summary>A small GPT: windows of 8 tokens, vocabulary 12.</summary>
        private const string Gpt = "{\"input\": [8], \"seed\": 3, \"nodes\": [" +
            "{\"name\": \"emb\", \"type\": \"embedding\", \"inputs\": [\"input\"], \"vocab\": 12, \"units\": 8}," +
            "{\"name\": \"pos\", \"type\": \"position_embedding\", \"inputs\": [\"emb\"]}," +
            "{\"name\": \"att\", \"type\": \"multi_head_attention\", \"inputs\": [\"pos\"], \"heads\": 2, \"causal\": true}," +
            "{\"name\": \"res\", \"type\": \"add\", \"inputs\": [\"pos\", \"att\"]}," +
            "{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"res\"], \"units\": 12, \"loss\": \"nll\", \"flatten\": false}]," +
            "\"outputs\": [\"out\"]}";

        /// <summary>Greedy with and without the cache agree; a seed names one sample; the callback
        /// sees the tokens and can stop.</summary>
        [Test]
        public static void GeneratesTokens()
        {
            using (var model = new Model(Ctx, Gpt))
            {
                long[] prompt = { 1, 2, 3 };
                long[] greedy = model.Generate(prompt, 20);
                Assert.Equal(20, greedy.Length, "tokens");
                Assert.True(greedy.All(t => t >= 0 && t < 12), "tokens inside the vocabulary");
                Assert.Sequence(greedy, model.Generate(prompt, 20, "{\"cache\": false}"), "recomputed tokens");
                Assert.Sequence(model.Generate(prompt, 30, "{\"temperature\": 1, \"seed\": 4}"),
                                model.Generate(prompt, 30, "{\"temperature\": 1, \"seed\": 4}"), "one seed");
                Assert.True(!model.Generate(prompt, 30, "{\"temperature\": 1, \"seed\": 4}")
                                  .SequenceEqual(model.Generate(prompt, 30, "{\"temperature\": 1, \"seed\": 5}")),
                            "seeds 4 and 5 sample differently");
                var seen = new List<long>();
                long[] stopped = model.Generate(prompt, 20, null, t => { seen.Add(t); return seen.Count == 4; });
                Assert.Sequence(greedy.Take(4), stopped, "tokens before the callback stopped");
                Assert.Sequence(stopped, seen, "tokens the callback saw");
            }
        }

        /// <summary>Bad prompts and options raise NnrtException with the library's message.</summary>
        [Test]
        public static void RefusesBadInput()
        {
            using (var model = new Model(Ctx, Gpt))
            {
                Assert.Fails(Status.InvalidArgument, () => model.Generate(new long[] { 1, 12 }, 5), "id 12", "prompt[1] is 12");
                Assert.Fails(Status.InvalidArgument, () => model.Generate(new long[0], 5), "empty prompt", "prompt_len is 0");
                Assert.Fails(Status.InvalidArgument, () => model.Generate(new long[9], 5), "long prompt", "more than the 8 positions");
                Assert.Fails(Status.InvalidArgument, () => model.Generate(new long[] { 1 }, 5, "{\"top_p\": 0.9}"), "unknown key", "top_p");
            }
        }
    }
}
