/* nnrt_model_generate through the C API: greedy and seeded sampling, the callback and stop
** tokens, the window, and every kind of bad input (each a clear status and message, the outputs
** untouched). The cached path against the full pass is tests/unit/model/decoder_test.cpp. */
#include "c_test.h"

static nnrt_context *ctx;

/* A small GPT: T 12, V 20. "%s" is the attention's "causal" value. */
static const char *gpt_format =
    "{\"input\": [12], \"seed\": 3, \"nodes\": ["
    " {\"name\": \"emb\", \"type\": \"embedding\", \"inputs\": [\"input\"], \"vocab\": 20, \"units\": 16},"
    " {\"name\": \"pos\", \"type\": \"position_embedding\", \"inputs\": [\"emb\"]},"
    " {\"name\": \"norm\", \"type\": \"rms_norm\", \"inputs\": [\"pos\"]},"
    " {\"name\": \"att\", \"type\": \"multi_head_attention\", \"inputs\": [\"norm\"], \"heads\": 2, \"causal\": %s},"
    " {\"name\": \"res\", \"type\": \"add\", \"inputs\": [\"pos\", \"att\"]},"
    " {\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"res\"], \"units\": 20, \"loss\": \"nll\", \"flatten\": false}],"
    " \"outputs\": [\"out\"]}";

static nnrt_model *make_gpt(const char *causal) {
  char config[2048];
  nnrt_model *m = NULL;
  snprintf(config, sizeof config, gpt_format, causal);
  CHECK_OK(nnrt_model_create(ctx, config, &m));
  return m;
}

/* Records the tokens the callback sees; stops after `stop_after` of them (0: never). */
typedef struct {
  int64_t seen[64];
  int count, stop_after;
} token_log;

static int on_token(int64_t token, void *user) {
  token_log *log = (token_log *)user;
  if (log->count < 64) log->seen[log->count] = token;
  ++log->count;
  return log->stop_after > 0 && log->count >= log->stop_after;
}

static void test_generate(void) {
  nnrt_model *m = make_gpt("true");
  const int64_t prompt[3] = {4, 8, 15};
  int64_t a[40], b[40];
  size_t na = 0, nb = 0, i;
  token_log log = {{0}, 0, 0};
  int differ = 0;
  /* Greedy is the default; the same call twice gives the same tokens, all in the vocabulary. */
  CHECK_OK(nnrt_model_generate(m, prompt, 3, NULL, a, 20, &na, NULL, NULL));
  CHECK(na == 20);
  for (i = 0; i < na; ++i) CHECK(a[i] >= 0 && a[i] < 20);
  CHECK_OK(nnrt_model_generate(m, prompt, 3, "{\"cache\": false}", b, 20, &nb, on_token, &log));
  CHECK(nb == 20 && memcmp(a, b, sizeof(int64_t) * 20) == 0);
  CHECK(log.count == 20 && memcmp(log.seen, b, sizeof(int64_t) * 20) == 0);
  /* The callback stops generation (NNRT_OK, the stopping token counted). */
  log.count = 0;
  log.stop_after = 3;
  CHECK_OK(nnrt_model_generate(m, prompt, 3, NULL, b, 20, &nb, on_token, &log));
  CHECK(nb == 3 && log.count == 3 && memcmp(a, b, sizeof(int64_t) * 3) == 0);
  /* Sampling: one seed, one sequence; another seed, another. */
  CHECK_OK(nnrt_model_generate(m, prompt, 3, "{\"temperature\": 1.5, \"seed\": 5}", a, 40, &na, NULL, NULL));
  CHECK_OK(nnrt_model_generate(m, prompt, 3, "{\"temperature\": 1.5, \"seed\": 5}", b, 40, &nb, NULL, NULL));
  CHECK(na == 40 && nb == 40 && memcmp(a, b, sizeof a) == 0);
  CHECK_OK(nnrt_model_generate(m, prompt, 3, "{\"temperature\": 1.5, \"seed\": 6, \"top_k\": 5}", b, 40, &nb, NULL, NULL));
  for (i = 0; i < 40; ++i) differ += a[i] != b[i];
  CHECK(differ > 0);
  /* A stop token ends generation once generated; max_tokens 0 generates nothing. */
  CHECK_OK(nnrt_model_generate(m, prompt, 3, NULL, a, 20, &na, NULL, NULL));
  {
    char options[64];
    snprintf(options, sizeof options, "{\"stop\": [%d]}", (int)a[2]);
    CHECK_OK(nnrt_model_generate(m, prompt, 3, options, b, 20, &nb, NULL, NULL));
    CHECK(nb >= 1 && nb <= 3 && b[nb - 1] == a[2]);
  }
  CHECK_OK(nnrt_model_generate(m, prompt, 3, NULL, NULL, 0, &nb, NULL, NULL));
  CHECK(nb == 0);
  /* The window: 12 positions; "stop" ends where it is full, the default slides on. */
  CHECK_OK(nnrt_model_generate(m, prompt, 3, "{\"when_full\": \"stop\"}", a, 40, &na, NULL, NULL));
  CHECK(na == 10);
  CHECK_OK(nnrt_model_generate(m, prompt, 3, NULL, a, 40, &na, NULL, NULL));
  CHECK(na == 40);
  nnrt_model_release(m);
}

static void test_bad_input(void) {
  nnrt_model *m = make_gpt("true"), *acausal = make_gpt("false"), *mlp = NULL;
  const int64_t prompt[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  const int64_t outside[2] = {3, 20}, negative[1] = {-1};
  int64_t out[8] = {-7, -7, -7, -7, -7, -7, -7, -7};
  size_t n = 777;
  int i;
  CHECK_STATUS(nnrt_model_generate(NULL, prompt, 2, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "m");
  CHECK_STATUS(nnrt_model_generate((nnrt_model *)ctx, prompt, 2, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "");
  CHECK_STATUS(nnrt_model_generate(m, NULL, 2, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "prompt is NULL");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 0, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "prompt_len is 0");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, NULL, NULL, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "tokens is NULL");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, NULL, out, 8, NULL, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "n_tokens");
  CHECK_STATUS(nnrt_model_generate(m, outside, 2, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "prompt[1] is 20: token ids of this model are 0 .. 19");
  CHECK_STATUS(nnrt_model_generate(m, negative, 1, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "prompt[0] is -1");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 13, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "13 tokens, more than the 12 positions");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, "{\"temprature\": 1}", out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "temprature");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, "{\"temperature\": \"hot\"}", out, 8, &n, NULL, NULL),
               NNRT_ERR_INVALID_ARGUMENT, "temperature");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, "{\"temperature\": -1}", out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "temperature");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, "{\"top_k\": -2}", out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "top_k");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, "{\"when_full\": \"wrap\"}", out, 8, &n, NULL, NULL),
               NNRT_ERR_INVALID_ARGUMENT, "when_full");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, "{\"stop\": [99]}", out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "options.stop[0] is 99");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 2, "{\"seed\": ", out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "");
  CHECK_STATUS(nnrt_model_generate(m, prompt, 10, "{\"when_full\": \"error\"}", out, 8, &n, NULL, NULL),
               NNRT_ERR_INVALID_ARGUMENT, "need 17 positions");
  /* Attention that sees later tokens has no cached path; recomputing the window runs it. */
  CHECK_STATUS(nnrt_model_generate(acausal, prompt, 2, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_UNSUPPORTED,
               "multi_head_attention 'att'");
  /* Not a token model. */
  CHECK_OK(nnrt_model_create(ctx,
                             "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 8},"
                             " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}",
                             &mlp));
  CHECK_STATUS(nnrt_model_generate(mlp, prompt, 2, NULL, out, 8, &n, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "not a token model");
  /* Nothing was written by the failed calls. */
  CHECK(n == 777);
  for (i = 0; i < 8; ++i) CHECK(out[i] == -7);
  CHECK_OK(nnrt_model_generate(acausal, prompt, 2, "{\"cache\": false}", out, 8, &n, NULL, NULL));
  CHECK(n == 8);
  nnrt_model_release(mlp);
  nnrt_model_release(acausal);
  nnrt_model_release(m);
}

int main(int argc, char **argv) {
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : NULL, &ctx));
  test_generate();
  test_bad_input();
  nnrt_context_release(ctx);
  return c_test_finish("test_generate");
}
