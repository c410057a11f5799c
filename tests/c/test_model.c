/* Models, trainers and evaluations through the C API: results, and every kind of bad input. */
#include <pthread.h>
#include <stdlib.h>

#include "c_test.h"
#include "lenet_example.h"

static nnrt_context *ctx;

static const char *lenet = NNRT_LENET_CONFIG;

/* Two Gaussian-ish blobs in 4-D: class 0 around -1, class 1 around +1 (deterministic). */
static void make_blobs(int n, float *x, int32_t *y) {
  int i, j;
  unsigned s = 12345;
  for (i = 0; i < n; ++i) {
    y[i] = i % 2;
    for (j = 0; j < 4; ++j) {
      s = s * 1103515245u + 12345u;
      x[i * 4 + j] = (y[i] ? 1.0f : -1.0f) + ((float)((s >> 16) & 0x7fff) / 32768.0f - 0.5f);
    }
  }
}

static const char *mlp =
    "{\"input\": [4], \"seed\": 7, \"layers\": [{\"type\": \"dense\", \"units\": 8, \"activation\": \"tanh\"},"
    " {\"type\": \"output\", \"units\": 2, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

static char *summary_of(nnrt_model *m) {
  size_t len;
  char *buf;
  nnrt_model_summary(m, NULL, 0, &len);
  buf = (char *)malloc(len + 1);
  nnrt_model_summary(m, buf, len + 1, &len);
  return buf;
}

static void test_model_api(void) {
  nnrt_model *m = NULL, *keep = (nnrt_model *)0x1;
  nnrt_array *x = NULL, *y = NULL, *w = NULL;
  int64_t count = 0, shape[NNRT_MAX_DIMS], xs[4] = {3, 1, 28, 28};
  int32_t nd;
  static float xv[3 * 784], yv[30];
  char *s;
  int i;

  CHECK_OK(nnrt_model_create(ctx, lenet, &m));
  CHECK_OK(nnrt_model_param_count(m, &count));
  CHECK(count == 520 + 25050 + 40200 + 2010);
  CHECK_OK(nnrt_model_get_param(m, "conv1.weight", &w));
  CHECK_OK(nnrt_array_info(w, NULL, &nd, shape));
  CHECK(nd == 4 && shape[0] == 20 && shape[1] == 1 && shape[2] == 5 && shape[3] == 5);
  nnrt_array_release(w);
  CHECK_OK(nnrt_model_get_param(m, "fc1.weight", &w));
  CHECK_OK(nnrt_array_info(w, NULL, &nd, shape));
  CHECK(nd == 2 && shape[0] == 200 && shape[1] == 200);
  nnrt_array_release(w);
  CHECK_OK(nnrt_model_get_param(m, "out.bias", &w));
  CHECK_OK(nnrt_array_info(w, NULL, &nd, shape));
  CHECK(nd == 1 && shape[0] == 10);

  /* set_param then get_param gives the value back */
  {
    float ten[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, back[10];
    int64_t s10[1] = {10}, s9[1] = {9};
    nnrt_array *v = NULL, *bad = NULL, *got = NULL;
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, s10, ten, sizeof ten, &v));
    CHECK_OK(nnrt_model_set_param(m, "out.bias", v));
    CHECK_OK(nnrt_model_get_param(m, "out.bias", &got));
    CHECK_OK(nnrt_array_to_host(got, back, sizeof back));
    CHECK(memcmp(ten, back, sizeof ten) == 0);
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, s9, ten, 36, &bad));
    CHECK_STATUS(nnrt_model_set_param(m, "out.bias", bad), NNRT_ERR_SHAPE, "[10]");
    CHECK_STATUS(nnrt_model_set_param(m, "out.bias", bad), NNRT_ERR_SHAPE, "[9]");
    CHECK_STATUS(nnrt_model_set_param(m, "nope", v), NNRT_ERR_INVALID_ARGUMENT, "conv1.weight");
    CHECK_STATUS(nnrt_model_set_param(m, NULL, v), NNRT_ERR_INVALID_ARGUMENT, "name is NULL");
    CHECK_STATUS(nnrt_model_get_param(m, "nope", &got), NNRT_ERR_INVALID_ARGUMENT, "no parameter \"nope\"");
    nnrt_array_release(v);
    nnrt_array_release(bad);
    nnrt_array_release(got);
  }
  nnrt_array_release(w);

  /* predict: probabilities per example */
  for (i = 0; i < 3 * 784; ++i) xv[i] = (float)(i % 17) / 17.0f;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 4, xs, xv, sizeof xv, &x));
  CHECK_OK(nnrt_model_predict(m, x, &y));
  CHECK_OK(nnrt_array_info(y, NULL, &nd, shape));
  CHECK(nd == 2 && shape[0] == 3 && shape[1] == 10);
  CHECK_OK(nnrt_array_to_host(y, yv, sizeof yv));
  for (i = 0; i < 3; ++i) {
    int k;
    double sum = 0;
    for (k = 0; k < 10; ++k) sum += yv[i * 10 + k];
    CHECK_NEAR(sum, 1.0, 1e-5);
  }
  nnrt_array_release(y);
  nnrt_array_release(x);
  {
    int64_t bad_shape[4] = {2, 1, 27, 28};
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 4, bad_shape, &x));
    CHECK_STATUS(nnrt_model_predict(m, x, &y), NNRT_ERR_SHAPE, "[N, 1, 28, 28]");
    CHECK_STATUS(nnrt_model_predict(m, x, &y), NNRT_ERR_SHAPE, "[2, 1, 27, 28]");
    CHECK_STATUS(nnrt_model_predict(m, x, NULL), NNRT_ERR_INVALID_ARGUMENT, "output is NULL");
    CHECK_STATUS(nnrt_model_predict(NULL, x, &y), NNRT_ERR_INVALID_ARGUMENT, "m is NULL");
    CHECK_STATUS(nnrt_model_predict(m, NULL, &y), NNRT_ERR_INVALID_ARGUMENT, "input is NULL");
    CHECK_STATUS(nnrt_model_predict((nnrt_model *)x, x, &y), NNRT_ERR_INVALID_ARGUMENT, "not a live nnrt_model");
    nnrt_array_release(x);
    /* A BOOL input is read as 0 and 1: all false predicts what zeros do. */
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_BOOL, 4, xs, &x));
    {
      nnrt_array *zeros = NULL, *want = NULL;
      static float got_v[30], want_v[30];
      CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 4, xs, &zeros));
      CHECK_OK(nnrt_model_predict(m, x, &y));
      CHECK_OK(nnrt_model_predict(m, zeros, &want));
      CHECK_OK(nnrt_array_to_host(y, got_v, sizeof got_v));
      CHECK_OK(nnrt_array_to_host(want, want_v, sizeof want_v));
      CHECK(memcmp(got_v, want_v, sizeof got_v) == 0);
      nnrt_array_release(y);
      nnrt_array_release(want);
      nnrt_array_release(zeros);
      y = NULL;
    }
    nnrt_array_release(x);
  }
  /* set_param: an integer value is refused, whatever its shape */
  {
    int64_t s10[1] = {10};
    nnrt_array *ints = NULL;
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_I32, 1, s10, &ints));
    CHECK_STATUS(nnrt_model_set_param(m, "out.bias", ints), NNRT_ERR_DTYPE, "i32");
    nnrt_array_release(ints);
  }

  s = summary_of(m);
  CHECK(strstr(s, "\"output_shape\":[20,24,24]") != NULL);
  CHECK(strstr(s, "\"output_shape\":[50,4,4]") != NULL);
  CHECK(strstr(s, "\"total_params\":67780") != NULL);
  CHECK(strstr(s, "\"conv2d\":[") != NULL); /* which backend ran the convolution */
  CHECK(strstr(s, "\"name\":\"conv1.weight\"") != NULL);
  free(s);
  CHECK_STATUS(nnrt_model_summary(m, NULL, 0, NULL), NNRT_ERR_INVALID_ARGUMENT, "len");
  CHECK_STATUS(nnrt_model_param_count(m, NULL), NNRT_ERR_INVALID_ARGUMENT, "count is NULL");
  nnrt_model_release(m);
  nnrt_model_release(NULL);

  /* config errors name the layer and the key */
  CHECK_STATUS(nnrt_model_create(NULL, lenet, &m), NNRT_ERR_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_STATUS(nnrt_model_create(ctx, NULL, &m), NNRT_ERR_INVALID_ARGUMENT, "config_json is NULL");
  CHECK_STATUS(nnrt_model_create(ctx, lenet, NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [", &keep), NNRT_ERR_INVALID_ARGUMENT, "not valid JSON");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"layers\": [{\"type\": \"dense\", \"units\": 2}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "config.input is required");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"unit\": 2}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "config.layers[0].units");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 2, \"colour\": 1}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "unknown key 'config.layers[0].colour'");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"quantum\"}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "unknown layer type \"quantum\"");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": \"two\"}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "config.layers[0].units");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 2, \"activation\": \"sparkle\"}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "unknown activation \"sparkle\"");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [1, 4, 4], \"layers\": [{\"type\": \"conv2d\", \"name\": \"big\", \"filters\": 2, \"kernel\": 5}]}", &keep),
               NNRT_ERR_SHAPE, "big");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"conv2d\", \"filters\": 2, \"kernel\": 3}]}", &keep),
               NNRT_ERR_SHAPE, "[4]");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"output\", \"units\": 2, \"loss\": \"hinge\"}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "unknown loss \"hinge\"");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [4], \"nodes\": [{\"type\": \"dense\", \"name\": \"a\", \"units\": 2, \"inputs\": [\"b\"]}]}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "unknown input \"b\"");
  CHECK(keep == (nnrt_model *)0x1);
}

typedef struct {
  nnrt_trainer *t;
} cancel_arg;

static void *cancel_soon(void *p) {
  nnrt_trainer_cancel(((cancel_arg *)p)->t);
  return NULL;
}

/* Cancel while fit runs: the progress callback of the first minibatch tells the cancelling thread
** that fit has started, and waits until that thread's nnrt_trainer_cancel has returned, so that the
** cancel lands in the middle of the fit (not before it, not after it). */
typedef struct {
  nnrt_trainer *t;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int fit_started, cancelled, progress_calls;
  nnrt_status cancel_status;
} running_cancel;

static void *cancel_when_fit_runs(void *p) {
  running_cancel *r = (running_cancel *)p;
  pthread_mutex_lock(&r->lock);
  while (!r->fit_started) pthread_cond_wait(&r->changed, &r->lock);
  pthread_mutex_unlock(&r->lock);
  r->cancel_status = nnrt_trainer_cancel(r->t);
  pthread_mutex_lock(&r->lock);
  r->cancelled = 1;
  pthread_cond_broadcast(&r->changed);
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

static int signal_fit_started(const nnrt_progress *p, void *user) {
  running_cancel *r = (running_cancel *)user;
  (void)p;
  pthread_mutex_lock(&r->lock);
  if (++r->progress_calls == 1) {
    r->fit_started = 1;
    pthread_cond_broadcast(&r->changed);
    while (!r->cancelled) pthread_cond_wait(&r->changed, &r->lock);
  }
  pthread_mutex_unlock(&r->lock);
  return 0;
}

static int progress_calls, epoch_ends;
static int count_progress(const nnrt_progress *p, void *user) {
  (void)user;
  CHECK(p->struct_size >= sizeof(nnrt_progress));
  ++progress_calls;
  if (p->epoch_end) ++epoch_ends;
  return 0;
}
static int stop_at_three(const nnrt_progress *p, void *user) {
  (void)p;
  return ++*(int *)user >= 3;
}

static void test_trainer_api(void) {
  enum { N = 256 };
  static float xv[N * 4];
  static int32_t yv[N];
  int64_t xs[2] = {N, 4}, ys[1] = {N};
  nnrt_array *x = NULL, *y = NULL;
  nnrt_dataset *data = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL, *keep = (nnrt_trainer *)0x1;
  nnrt_evaluation *e = NULL;
  double loss0 = 0, loss = 0, acc = 0;
  char buf[8192];
  size_t len;
  int i;

  make_blobs(N, xv, yv);
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &x));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, yv, sizeof yv, &y));
  CHECK_OK(nnrt_dataset_from_arrays(ctx, x, y, &data));
  CHECK_OK(nnrt_model_create(ctx, mlp, &m));

  /* bad options */
  CHECK_STATUS(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"lion\"}}", &keep), NNRT_ERR_INVALID_ARGUMENT, "lion");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": -1}}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "learning_rate");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"adam\", \"momentum\": 0.9}}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "options.optimizer.momentum");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"batch_size\": 0}", &keep), NNRT_ERR_INVALID_ARGUMENT, "options.batch_size");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"bach_size\": 8}", &keep), NNRT_ERR_INVALID_ARGUMENT, "options.bach_size");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"workers\": 0}", &keep), NNRT_ERR_INVALID_ARGUMENT, "options.workers");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"schedule\": {\"type\": \"step\", \"gamma\": \"half\"}}", &keep),
               NNRT_ERR_INVALID_ARGUMENT, "options.schedule.gamma");
  CHECK_STATUS(nnrt_trainer_create(NULL, NULL, &keep), NNRT_ERR_INVALID_ARGUMENT, "m is NULL");
  CHECK_STATUS(nnrt_trainer_create(m, NULL, NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  {
    nnrt_model *no_loss = NULL;
    CHECK_OK(nnrt_model_create(ctx, "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 2}]}", &no_loss));
    CHECK_STATUS(nnrt_trainer_create(no_loss, NULL, &keep), NNRT_ERR_INVALID_ARGUMENT, "output layer");
    nnrt_model_release(no_loss);
  }
  CHECK(keep == (nnrt_trainer *)0x1);

  CHECK_OK(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.5, \"momentum\": 0.5}, \"batch_size\": 32, \"seed\": 3}", &t));

  /* step: the loss on one batch falls */
  CHECK_OK(nnrt_trainer_step(t, x, y, &loss0));
  for (i = 0; i < 20; ++i) CHECK_OK(nnrt_trainer_step(t, x, y, &loss));
  CHECK(loss < loss0 * 0.5);
  CHECK_OK(nnrt_trainer_step(t, x, y, NULL));

  /* step: bad batches */
  {
    int32_t bad_labels[N];
    nnrt_array *yb = NULL, *xn = NULL, *y3 = NULL;
    int64_t s3[1] = {3};
    memcpy(bad_labels, yv, sizeof bad_labels);
    bad_labels[5] = 7;
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, bad_labels, sizeof bad_labels, &yb));
    CHECK_STATUS(nnrt_trainer_step(t, x, yb, &loss), NNRT_ERR_INVALID_ARGUMENT, "label 7 of example 5");
    xv[9] = NAN;
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &xn));
    xv[9] = 0;
    CHECK_STATUS(nnrt_trainer_step(t, xn, y, &loss), NNRT_ERR_INVALID_ARGUMENT, "not finite");
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, s3, yv, 12, &y3));
    CHECK_STATUS(nnrt_trainer_step(t, x, y3, &loss), NNRT_ERR_SHAPE, "[3]");
    CHECK_STATUS(nnrt_trainer_step(t, y, y, &loss), NNRT_ERR_SHAPE, "[N, 4]");
    CHECK_STATUS(nnrt_trainer_step(t, x, NULL, &loss), NNRT_ERR_INVALID_ARGUMENT, "y is NULL");
    {
      nnrt_array *xb = NULL, *yb8 = NULL;
      CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_BOOL, 2, xs, &xb));
      CHECK_STATUS(nnrt_trainer_step(t, xb, y, &loss), NNRT_ERR_DTYPE, "bool");
      CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_BOOL, 1, ys, &yb8));
      CHECK_STATUS(nnrt_trainer_step(t, x, yb8, &loss), NNRT_ERR_DTYPE, "bool");
      nnrt_array_release(xb);
      nnrt_array_release(yb8);
    }
    nnrt_array_release(yb);
    nnrt_array_release(xn);
    nnrt_array_release(y3);
  }

  /* fit with progress; then evaluate */
  CHECK_OK(nnrt_trainer_set_progress(t, count_progress, NULL));
  CHECK_OK(nnrt_trainer_fit(t, data, data, 3));
  CHECK(epoch_ends == 3);
  CHECK(progress_calls == 3 * (N / 32) + 3);
  CHECK_OK(nnrt_trainer_result(t, buf, sizeof buf, &len));
  CHECK(strstr(buf, "\"stop_reason\":\"completed\"") != NULL);
  CHECK(strstr(buf, "\"epochs\":3") != NULL);
  CHECK(strstr(buf, "\"history\"") != NULL);
  CHECK_OK(nnrt_model_evaluate(m, data, &e));
  CHECK_OK(nnrt_evaluation_accuracy(e, &acc));
  CHECK(acc > 0.95);
  CHECK_OK(nnrt_evaluation_report(e, buf, sizeof buf, &len));
  CHECK(strstr(buf, "\"confusion_matrix\"") != NULL);
  CHECK(strstr(buf, "\"macro_avg\"") != NULL);
  CHECK(strstr(buf, "\"weighted_avg\"") != NULL);
  CHECK(strstr(buf, "\"support\":128") != NULL);
  CHECK_STATUS(nnrt_evaluation_accuracy(e, NULL), NNRT_ERR_INVALID_ARGUMENT, "accuracy is NULL");
  nnrt_evaluation_release(e);
  nnrt_evaluation_release(NULL);

  /* the callback stops training */
  {
    int calls = 0;
    CHECK_OK(nnrt_trainer_set_progress(t, stop_at_three, &calls));
    CHECK_OK(nnrt_trainer_fit(t, data, NULL, 5));
    CHECK(calls == 3);
    CHECK_OK(nnrt_trainer_result(t, buf, sizeof buf, &len));
    CHECK(strstr(buf, "\"stop_reason\":\"callback\"") != NULL);
    CHECK_OK(nnrt_trainer_set_progress(t, NULL, NULL));
  }

  /* cancel from another thread while fit runs: fit stops after the current minibatch */
  {
    pthread_t th;
    running_cancel r;
    const char *iterations;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.cancel_status = NNRT_ERR_INTERNAL;
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);
    CHECK(pthread_create(&th, NULL, cancel_when_fit_runs, &r) == 0);
    CHECK_OK(nnrt_trainer_set_progress(t, signal_fit_started, &r));
    CHECK_STATUS(nnrt_trainer_fit(t, data, NULL, 50), NNRT_ERR_CANCELLED, "cancel");
    pthread_join(th, NULL);
    CHECK(r.cancel_status == NNRT_OK);
    /* The callback saw the first minibatch and at most the one running when the cancel came. */
    CHECK(r.progress_calls >= 1 && r.progress_calls <= 2);
    CHECK_OK(nnrt_trainer_result(t, buf, sizeof buf, &len));
    CHECK(strstr(buf, "\"stop_reason\":\"cancelled\"") != NULL);
    iterations = strstr(buf, "\"iterations\":");
    CHECK(iterations != NULL && atol(iterations + strlen("\"iterations\":")) < 50 * (N / 32));
    CHECK_OK(nnrt_trainer_set_progress(t, NULL, NULL));
    pthread_cond_destroy(&r.changed);
    pthread_mutex_destroy(&r.lock);
  }

  /* cancel from another thread before fit starts: the next fit stops at once */
  {
    pthread_t th;
    cancel_arg a;
    a.t = t;
    pthread_create(&th, NULL, cancel_soon, &a);
    pthread_join(th, NULL);
    CHECK_STATUS(nnrt_trainer_fit(t, data, NULL, 2), NNRT_ERR_CANCELLED, "cancel");
    CHECK_OK(nnrt_trainer_result(t, buf, sizeof buf, &len));
    CHECK(strstr(buf, "\"stop_reason\":\"cancelled\"") != NULL);
    CHECK_OK(nnrt_trainer_fit(t, data, NULL, 1)); /* the cancel was used up */
  }

  /* fit: bad input */
  CHECK_STATUS(nnrt_trainer_fit(t, data, NULL, -1), NNRT_ERR_INVALID_ARGUMENT, "epochs");
  CHECK_STATUS(nnrt_trainer_fit(t, NULL, NULL, 1), NNRT_ERR_INVALID_ARGUMENT, "train is NULL");
  CHECK_STATUS(nnrt_trainer_fit(NULL, data, NULL, 1), NNRT_ERR_INVALID_ARGUMENT, "t is NULL");
  CHECK_STATUS(nnrt_trainer_cancel(NULL), NNRT_ERR_INVALID_ARGUMENT, "t is NULL");
  CHECK_STATUS(nnrt_trainer_result(t, NULL, 4, &len), NNRT_ERR_INVALID_ARGUMENT, "buf is NULL");
  CHECK_STATUS(nnrt_trainer_set_progress(NULL, count_progress, NULL), NNRT_ERR_INVALID_ARGUMENT, "t is NULL");
  CHECK_STATUS(nnrt_trainer_set_progress((nnrt_trainer *)m, count_progress, NULL), NNRT_ERR_INVALID_ARGUMENT,
               "not a live nnrt_trainer");

  /* evaluate and report: bad input */
  {
    nnrt_evaluation *keep_e = (nnrt_evaluation *)0x1;
    nnrt_dataset *wide = NULL, *far = NULL;
    nnrt_array *xw = NULL, *yf = NULL;
    int64_t s3[2] = {N, 3};
    int32_t far_labels[N];
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, s3, &xw));
    CHECK_OK(nnrt_dataset_from_arrays(ctx, xw, y, &wide));
    CHECK_STATUS(nnrt_model_evaluate(m, wide, &keep_e), NNRT_ERR_SHAPE, "[4]");
    CHECK_STATUS(nnrt_model_evaluate(m, wide, &keep_e), NNRT_ERR_SHAPE, "[3]");
    memcpy(far_labels, yv, sizeof far_labels);
    far_labels[9] = 2;
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, ys, far_labels, sizeof far_labels, &yf));
    CHECK_OK(nnrt_dataset_from_arrays(ctx, x, yf, &far));
    CHECK_STATUS(nnrt_model_evaluate(m, far, &keep_e), NNRT_ERR_INVALID_ARGUMENT, "class labels up to 2");
    CHECK_STATUS(nnrt_model_evaluate(NULL, data, &keep_e), NNRT_ERR_INVALID_ARGUMENT, "m is NULL");
    CHECK_STATUS(nnrt_model_evaluate(m, NULL, &keep_e), NNRT_ERR_INVALID_ARGUMENT, "data is NULL");
    CHECK_STATUS(nnrt_model_evaluate(m, data, NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
    CHECK_STATUS(nnrt_model_evaluate(m, (nnrt_dataset *)x, &keep_e), NNRT_ERR_INVALID_ARGUMENT,
                 "not a live nnrt_dataset");
    CHECK(keep_e == (nnrt_evaluation *)0x1);
    CHECK_OK(nnrt_model_evaluate(m, data, &e));
    CHECK_OK(nnrt_evaluation_report(e, NULL, 0, &len));
    CHECK(len > 0);
    CHECK_STATUS(nnrt_evaluation_report(NULL, buf, sizeof buf, &len), NNRT_ERR_INVALID_ARGUMENT, "e is NULL");
    CHECK_STATUS(nnrt_evaluation_report(e, buf, sizeof buf, NULL), NNRT_ERR_INVALID_ARGUMENT, "len");
    CHECK_STATUS(nnrt_evaluation_report(e, NULL, 4, &len), NNRT_ERR_INVALID_ARGUMENT, "buf is NULL");
    CHECK_STATUS(nnrt_evaluation_report((nnrt_evaluation *)x, buf, sizeof buf, &len), NNRT_ERR_INVALID_ARGUMENT,
                 "not a live nnrt_evaluation");
    CHECK_STATUS(nnrt_evaluation_accuracy((nnrt_evaluation *)x, &acc), NNRT_ERR_INVALID_ARGUMENT,
                 "not a live nnrt_evaluation");
    nnrt_evaluation_release(e);
    nnrt_dataset_release(wide);
    nnrt_dataset_release(far);
    nnrt_array_release(xw);
    nnrt_array_release(yf);
  }
  {
    nnrt_dataset *images = NULL;
    int64_t s4[4] = {2, 1, 28, 28}, s2[1] = {2};
    nnrt_array *xi = NULL, *yi = NULL;
    int32_t l2[2] = {0, 1};
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 4, s4, &xi));
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 1, s2, l2, sizeof l2, &yi));
    CHECK_OK(nnrt_dataset_from_arrays(ctx, xi, yi, &images));
    CHECK_STATUS(nnrt_trainer_fit(t, images, NULL, 1), NNRT_ERR_SHAPE, "[1, 28, 28]");
    nnrt_dataset_release(images);
    nnrt_array_release(xi);
    nnrt_array_release(yi);
  }

  /* release order is free: the trainer keeps the model, the model its context */
  nnrt_model_release(m);
  CHECK_OK(nnrt_trainer_step(t, x, y, &loss));
  nnrt_trainer_release(t);
  nnrt_trainer_release(NULL);
  nnrt_dataset_release(data);
  nnrt_array_release(x);
  nnrt_array_release(y);
}

/* Same seed, deterministic context: bit-identical weights after training. */
static void train_and_read(const char *options, float *w, size_t n) {
  nnrt_context *c = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_array *x = NULL, *y = NULL, *p = NULL;
  nnrt_dataset *d = NULL;
  static float xv[64 * 4];
  static int32_t yv[64];
  int64_t xs[2] = {64, 4}, ys[1] = {64};
  make_blobs(64, xv, yv);
  CHECK_OK(nnrt_context_create(options, &c));
  CHECK_OK(nnrt_array_from_host(c, NNRT_DTYPE_F32, 2, xs, xv, sizeof xv, &x));
  CHECK_OK(nnrt_array_from_host(c, NNRT_DTYPE_I32, 1, ys, yv, sizeof yv, &y));
  CHECK_OK(nnrt_dataset_from_arrays(c, x, y, &d));
  CHECK_OK(nnrt_model_create(c, "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 8, \"activation\": \"relu\"},"
                                " {\"type\": \"dropout\", \"rate\": 0.25},"
                                " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}", &m));
  CHECK_OK(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, \"batch_size\": 16}", &t));
  CHECK_OK(nnrt_trainer_fit(t, d, NULL, 2));
  CHECK_OK(nnrt_model_get_param(m, "layer0.weight", &p));
  CHECK_OK(nnrt_array_to_host(p, w, n * sizeof(float)));
  nnrt_array_release(p);
  nnrt_trainer_release(t);
  nnrt_model_release(m);
  nnrt_dataset_release(d);
  nnrt_array_release(x);
  nnrt_array_release(y);
  nnrt_context_release(c);
}

static void test_determinism(const char *backend) {
  float a[32], b[32], c[32];
  char o1[128], o2[128];
  snprintf(o1, sizeof o1, "{\"backend\": \"%s\", \"deterministic\": true, \"seed\": 5, \"threads\": 2}", backend);
  snprintf(o2, sizeof o2, "{\"backend\": \"%s\", \"deterministic\": true, \"seed\": 6, \"threads\": 2}", backend);
  train_and_read(o1, a, 32);
  train_and_read(o1, b, 32);
  train_and_read(o2, c, 32);
  CHECK(memcmp(a, b, sizeof a) == 0);
  CHECK(memcmp(a, c, sizeof a) != 0);
}

/* A graph of two named inputs and two outputs, through nnrt_model_predict_many. */
static void test_several_inputs(void) {
  static const char *config =
      "{\"inputs\": [{\"name\": \"a\", \"shape\": [3]}, {\"name\": \"b\", \"shape\": [3]}], \"seed\": 3, \"nodes\": ["
      " {\"name\": \"sum\", \"type\": \"add\", \"inputs\": [\"a\", \"b\"]},"
      " {\"name\": \"scaled\", \"type\": \"dense\", \"inputs\": [\"b\"], \"units\": 2}],"
      " \"outputs\": [\"sum\", \"scaled\"]}";
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_array *a = NULL, *b = NULL, *wide = NULL, *few = NULL, *w = NULL, *bias = NULL, *out[2] = {NULL, NULL};
  nnrt_array *again[2] = {NULL, NULL}, *one = NULL;
  const nnrt_array *ins[2];
  float av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {0.5f, -1, 2, 8, 0, -3}, sum[6], scaled[4], wv[6], biasv[2];
  float sum2[6], scaled2[4], zeros8[8] = {0};
  int64_t s23[2] = {2, 3}, s24[2] = {2, 4}, s13[2] = {1, 3}, shape[NNRT_MAX_DIMS];
  int32_t count = 0, nd = 0;
  char name[8];
  size_t len = 0;
  int i, j, k, ok = 1;

  CHECK_OK(nnrt_model_create(ctx, config, &m));
  CHECK_OK(nnrt_model_input_count(m, &count));
  CHECK(count == 2);
  CHECK_OK(nnrt_model_output_count(m, &count));
  CHECK(count == 2);
  CHECK_OK(nnrt_model_input(m, 1, name, sizeof name, &len, &nd, shape));
  CHECK(strcmp(name, "b") == 0 && len == 1 && nd == 1 && shape[0] == 3);
  CHECK_STATUS(nnrt_model_input(m, 2, name, sizeof name, &len, &nd, shape), NNRT_ERR_INVALID_ARGUMENT, "inputs 0 to 1");

  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s23, av, sizeof av, &a));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s23, bv, sizeof bv, &b));
  ins[0] = a;
  ins[1] = b;
  CHECK_OK(nnrt_model_predict_many(m, ins, 2, NULL, out, 2));
  CHECK_OK(nnrt_array_to_host(out[0], sum, sizeof sum));
  CHECK_OK(nnrt_array_to_host(out[1], scaled, sizeof scaled));
  CHECK_OK(nnrt_model_get_param(m, "scaled.weight", &w));
  CHECK_OK(nnrt_model_get_param(m, "scaled.bias", &bias));
  CHECK_OK(nnrt_array_to_host(w, wv, sizeof wv));
  CHECK_OK(nnrt_array_to_host(bias, biasv, sizeof biasv));
  for (i = 0; i < 6; ++i) ok &= sum[i] == av[i] + bv[i];
  for (i = 0; i < 2; ++i)
    for (j = 0; j < 2; ++j) {
      double want = biasv[j];
      for (k = 0; k < 3; ++k) want += (double)bv[i * 3 + k] * wv[j * 3 + k];
      ok &= fabs(scaled[i * 2 + j] - want) < 1e-5;
    }
  CHECK(ok);
  /* The second call replays the plan of these layouts: the same bits. */
  CHECK_OK(nnrt_model_predict_many(m, ins, 2, NULL, again, 2));
  CHECK_OK(nnrt_array_to_host(again[0], sum2, sizeof sum2));
  CHECK_OK(nnrt_array_to_host(again[1], scaled2, sizeof scaled2));
  CHECK(memcmp(sum, sum2, sizeof sum) == 0 && memcmp(scaled, scaled2, sizeof scaled) == 0);
  for (i = 0; i < 2; ++i) {
    nnrt_array_release(out[i]);
    nnrt_array_release(again[i]);
    out[i] = again[i] = NULL;
  }
  /* Stopped by run options before any op: cancelled, past a deadline; nothing written. */
  {
    nnrt_run_options *o = NULL;
    CHECK_OK(nnrt_run_options_create(&o));
    CHECK_OK(nnrt_run_options_cancel(o));
    CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, o, out, 2), NNRT_ERR_CANCELLED, "nnrt_run_options_cancel");
    CHECK_OK(nnrt_run_options_reset(o));
    CHECK_OK(nnrt_run_options_set_timeout(o, 1e-9));
    CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, o, out, 2), NNRT_ERR_DEADLINE_EXCEEDED, "");
    CHECK(out[0] == NULL && out[1] == NULL);
    nnrt_run_options_release(o);
  }
  CHECK_STATUS(nnrt_model_input_count(m, NULL), NNRT_ERR_INVALID_ARGUMENT, "count is NULL");
  CHECK_STATUS(nnrt_model_output_count(NULL, &count), NNRT_ERR_INVALID_ARGUMENT, "m is NULL");
  CHECK_STATUS(nnrt_model_input(m, 0, name, sizeof name, &len, NULL, shape), NNRT_ERR_INVALID_ARGUMENT, "ndim or shape");
  /* Only the first output asked for. */
  CHECK_OK(nnrt_model_predict_many(m, ins, 2, NULL, out, 1));
  CHECK_OK(nnrt_array_to_host(out[0], sum2, sizeof sum2));
  CHECK(memcmp(sum, sum2, sizeof sum) == 0 && out[1] == NULL);
  nnrt_array_release(out[0]);
  out[0] = NULL;
  /* One array as both inputs (one memory: not planned) is a + a. */
  ins[1] = a;
  CHECK_OK(nnrt_model_predict_many(m, ins, 2, NULL, out, 1));
  CHECK_OK(nnrt_array_to_host(out[0], sum2, sizeof sum2));
  for (i = 0, ok = 1; i < 6; ++i) ok &= sum2[i] == 2 * av[i];
  CHECK(ok);
  nnrt_array_release(out[0]);
  out[0] = NULL;

  /* Bad calls: each refused with what was expected, nothing written. */
  CHECK_STATUS(nnrt_model_predict(m, a, &one), NNRT_ERR_INVALID_ARGUMENT, "takes 2 inputs (a [3], b [3])");
  CHECK(one == NULL);
  CHECK_STATUS(nnrt_model_predict_many(m, ins, 1, NULL, out, 1), NNRT_ERR_INVALID_ARGUMENT, "n_inputs is 1");
  CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, NULL, out, 3), NNRT_ERR_INVALID_ARGUMENT, "expected 1 to 2");
  CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, NULL, out, 0), NNRT_ERR_INVALID_ARGUMENT, "n_outputs is 0");
  CHECK_STATUS(nnrt_model_predict_many(m, NULL, 2, NULL, out, 1), NNRT_ERR_INVALID_ARGUMENT, "inputs is NULL");
  CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, NULL, NULL, 1), NNRT_ERR_INVALID_ARGUMENT, "outputs is NULL");
  ins[1] = NULL;
  CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, NULL, out, 1), NNRT_ERR_INVALID_ARGUMENT, "inputs[1]");
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s24, zeros8, sizeof zeros8, &wide));
  ins[1] = wide;
  CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, NULL, out, 1), NNRT_ERR_SHAPE, "input 1 'b': expected [N, 3]");
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s13, av, sizeof av / 2, &few));
  ins[1] = few;
  CHECK_STATUS(nnrt_model_predict_many(m, ins, 2, NULL, out, 1), NNRT_ERR_SHAPE, "the same examples");
  CHECK(out[0] == NULL);
  CHECK_STATUS(nnrt_trainer_create(m, "{}", &t), NNRT_ERR_UNSUPPORTED, "training takes models of one input");
  nnrt_array_release(a);
  nnrt_array_release(b);
  nnrt_array_release(wide);
  nnrt_array_release(few);
  nnrt_array_release(w);
  nnrt_array_release(bias);
  nnrt_model_release(m);
  m = NULL;

  /* Configs refused with the key named. */
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [3], \"inputs\": [{\"name\": \"a\", \"shape\": [3]}], \"layers\": "
                                      "[{\"type\": \"flatten\"}]}", &m), NNRT_ERR_INVALID_ARGUMENT, "not both");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"inputs\": [{\"name\": \"a\", \"shape\": [3]}, {\"name\": \"a\", \"shape\": [3]}],"
                                      " \"nodes\": [{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"a\"]}]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "config.inputs[1].name: \"a\" is used twice");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"inputs\": [{\"name\": \"a\", \"shape\": [3]}, {\"name\": \"b\", \"shape\": [3]}],"
                                      " \"nodes\": [{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"a\"]}]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "config.inputs[1] 'b': no node reads it");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"inputs\": [{\"name\": \"a\", \"shape\": [0]}],"
                                      " \"nodes\": [{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"a\"]}]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "config.inputs[0].shape: dims must be positive");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"inputs\": [{\"name\": \"a\"}],"
                                      " \"nodes\": [{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"a\"]}]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "config.inputs[0].shape is required");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"inputs\": [{\"name\": \"a\", \"shape\": [3], \"dtype\": \"i64\"}],"
                                      " \"nodes\": [{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"a\"]}]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "dtype");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"inputs\": [{\"name\": \"a\", \"shape\": [3]}],"
                                      " \"nodes\": [{\"name\": \"a\", \"type\": \"flatten\", \"inputs\": [\"a\"]}]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "the name of a model input");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"inputs\": [{\"name\": \"a\", \"shape\": [3]}, {\"name\": \"b\", \"shape\": [3]}],"
                                      " \"layers\": [{\"type\": \"flatten\"}]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "several inputs is a graph");
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [3], \"nodes\": [{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": "
                                      "[\"input\"]}], \"outputs\": [\"f\", \"f\"]}", &m),
               NNRT_ERR_INVALID_ARGUMENT, "\"f\" is listed twice");
  CHECK(m == NULL);
}

/* multi_head_attention's key mask: "keep" and "padding" are each other's complement, a mask that
** keeps every token changes nothing, and a masked token changes only its own row. */
static void test_attention_key_mask(void) {
  static const char *format =
      "{\"inputs\": [{\"name\": \"tokens\", \"shape\": [5]}%s], \"seed\": 11, \"nodes\": ["
      " {\"name\": \"emb\", \"type\": \"embedding\", \"inputs\": [\"tokens\"], \"vocab\": 7, \"units\": 8},"
      " {\"name\": \"attn\", \"type\": \"multi_head_attention\", \"inputs\": [\"emb\"%s], \"heads\": 2%s}]}";
  char config[1024];
  nnrt_model *plain = NULL, *keep = NULL, *pad = NULL;
  nnrt_array *tokens = NULL, *other = NULL, *keep_mask = NULL, *pad_mask = NULL, *ones = NULL, *y = NULL;
  const nnrt_array *ins[2];
  float tv[10] = {1, 2, 3, 4, 5, 6, 0, 1, 2, 3}, ov[10] = {1, 2, 3, 6, 0, 6, 0, 1, 2, 3};
  float kv[10] = {1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, pv[10], onev[10];
  static float base[80], got[80], masked[80], changed[80];
  int64_t s25[2] = {2, 5};
  int i, ok = 1;

  for (i = 0; i < 10; ++i) {
    pv[i] = 1 - kv[i];
    onev[i] = 1;
  }
  snprintf(config, sizeof config, format, "", "", "");
  CHECK_OK(nnrt_model_create(ctx, config, &plain));
  snprintf(config, sizeof config, format, ", {\"name\": \"mask\", \"shape\": [5]}", ", \"mask\"", ", \"mask\": \"keep\"");
  CHECK_OK(nnrt_model_create(ctx, config, &keep));
  snprintf(config, sizeof config, format, ", {\"name\": \"mask\", \"shape\": [5]}", ", \"mask\"", ", \"mask\": \"padding\"");
  CHECK_OK(nnrt_model_create(ctx, config, &pad));
  if (!plain || !keep || !pad) goto done;
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s25, tv, sizeof tv, &tokens));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s25, ov, sizeof ov, &other));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s25, kv, sizeof kv, &keep_mask));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s25, pv, sizeof pv, &pad_mask));
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, s25, onev, sizeof onev, &ones));

  CHECK_OK(nnrt_model_predict(plain, tokens, &y));
  CHECK_OK(nnrt_array_to_host(y, base, sizeof base));
  nnrt_array_release(y);
  ins[0] = tokens;
  ins[1] = ones;
  CHECK_OK(nnrt_model_predict_many(keep, ins, 2, NULL, &y, 1));
  CHECK_OK(nnrt_array_to_host(y, got, sizeof got));
  nnrt_array_release(y);
  for (i = 0; i < 80; ++i) ok &= fabs(got[i] - base[i]) <= 1e-6 * (1 + fabs(base[i]));
  CHECK(ok);

  ins[1] = keep_mask;
  CHECK_OK(nnrt_model_predict_many(keep, ins, 2, NULL, &y, 1));
  CHECK_OK(nnrt_array_to_host(y, masked, sizeof masked));
  nnrt_array_release(y);
  ins[1] = pad_mask;
  CHECK_OK(nnrt_model_predict_many(pad, ins, 2, NULL, &y, 1));
  CHECK_OK(nnrt_array_to_host(y, got, sizeof got));
  nnrt_array_release(y);
  CHECK(memcmp(got, masked, sizeof got) == 0);
  CHECK(memcmp(masked, base, sizeof base) != 0);

  /* `other` differs from `tokens` only at the masked positions 3 and 4 of example 0: their own rows
  ** change (their queries did), every other row is the same. */
  ins[0] = other;
  ins[1] = keep_mask;
  CHECK_OK(nnrt_model_predict_many(keep, ins, 2, NULL, &y, 1));
  CHECK_OK(nnrt_array_to_host(y, changed, sizeof changed));
  nnrt_array_release(y);
  for (i = 0, ok = 1; i < 10; ++i) {
    int row_masked = kv[i] == 0, same = memcmp(changed + 8 * i, masked + 8 * i, 8 * sizeof(float)) == 0;
    ok &= row_masked ? !same : same;
  }
  CHECK(ok);
  CHECK_STATUS(nnrt_model_create(ctx, "{\"input\": [5], \"layers\": [{\"type\": \"embedding\", \"vocab\": 7, \"units\": 8},"
                                      " {\"type\": \"multi_head_attention\", \"heads\": 2, \"mask\": \"zero\"}]}", &plain),
               NNRT_ERR_INVALID_ARGUMENT, "expected \"padding\"");
done:
  nnrt_array_release(tokens);
  nnrt_array_release(other);
  nnrt_array_release(keep_mask);
  nnrt_array_release(pad_mask);
  nnrt_array_release(ones);
  nnrt_model_release(plain);
  nnrt_model_release(keep);
  nnrt_model_release(pad);
}

int main(int argc, char **argv) {
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : NULL, &ctx));
  test_model_api();
  test_trainer_api();
  test_determinism("reference");
  test_several_inputs();
  test_attention_key_mask();
  nnrt_context_release(ctx);
  return c_test_finish("test_model");
}
