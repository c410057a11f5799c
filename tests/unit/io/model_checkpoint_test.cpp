// Model and trainer checkpoints on the reference backend: files that are well-formed safetensors
// with valid checksums but do not describe a model (a broken config, missing, extra or misshapen
// tensors, damaged trainer state) are NNRT_ERR_CORRUPT, and a failed restore changes nothing.
#include <gtest/gtest.h>

#include "backend/context.h"
#include "model/model_tensors.h"
#include "io_test_util.h"
#include "model/model.h"
#include "train/trainer.h"

namespace nnrt::io {
namespace {

using test::ScratchFolder;

const char *kConfig = R"({"input": [4], "seed": 5, "layers": [
  {"type": "dense", "units": 6, "activation": "relu"},
  {"type": "output", "units": 3, "activation": "softmax", "loss": "nll"}]})";

std::shared_ptr<Context> reference_context() {
  ContextOptions o;
  o.backend = "reference";
  o.deterministic = true;
  return Context::create(o);
}

std::vector<unsigned char> param_bytes(const model::Model &m) {
  std::vector<unsigned char> all;
  for (const TensorRecord &r : model::param_records(m)) all.insert(all.end(), r.bytes.begin(), r.bytes.end());
  return all;
}

class ModelCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx = reference_context();
    m = model::Model::create(ctx, Json::parse(kConfig));
    path = folder.file("m.safetensors");
    m->save(path);
  }

  // Rewrites the saved file after `change`, with fresh checksums: damage no checksum can see.
  template <class Change>
  void rewrite(Change change) {
    Checkpoint c = read_checkpoint(path);
    change(c);
    write_checkpoint(path, c);
  }

  std::string load_error(nnrt_status expected = NNRT_ERR_CORRUPT) {
    try {
      model::Model::load(ctx, path);
    } catch (const Error &e) {
      EXPECT_EQ(e.status(), expected) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "the load succeeded";
    return "";
  }

  ScratchFolder folder;
  std::shared_ptr<Context> ctx;
  std::shared_ptr<model::Model> m;
  std::string path;
};

TEST_F(ModelCheckpoint, LoadsWhatWasSaved) {
  std::shared_ptr<model::Model> loaded = model::Model::load(ctx, path);
  EXPECT_EQ(loaded->config(), m->config());
  EXPECT_EQ(param_bytes(*loaded), param_bytes(*m));
  Checkpoint c = read_checkpoint(path);
  ASSERT_EQ(c.tensors.size(), 4u);
  EXPECT_EQ(c.tensors[0].name, "layer0.weight");
  EXPECT_EQ(c.tensors[0].shape, (Shape{6, 4}));  // PyTorch's [out, in]
}

TEST_F(ModelCheckpoint, ConfigThatDoesNotBuildIsCorrupt) {
  rewrite([](Checkpoint &c) {
    std::string &config = c.metadata[kConfigKey];
    config.replace(config.find("relu"), 4, "relq");
  });
  std::string message = load_error();
  EXPECT_NE(message.find("not a valid model config"), std::string::npos) << message;
  EXPECT_NE(message.find("relq"), std::string::npos) << message;
  rewrite([](Checkpoint &c) { c.metadata[kConfigKey] = "{\"input\": "; });
  EXPECT_NE(load_error().find("not valid JSON"), std::string::npos);
  rewrite([](Checkpoint &c) { c.metadata[kConfigKey] = "{\"input\": [1e999]}"; });
  EXPECT_NE(load_error().find("not valid JSON"), std::string::npos);
  rewrite([](Checkpoint &c) { c.metadata.erase(kConfigKey); });
  EXPECT_NE(load_error().find("nnrt.config"), std::string::npos);
}

TEST_F(ModelCheckpoint, TensorsMustMatchTheConfig) {
  rewrite([](Checkpoint &c) { c.tensors.erase(c.tensors.begin() + 1); });
  EXPECT_NE(load_error().find("\"layer0.bias\" that its config defines is missing"), std::string::npos);
  m->save(path);
  rewrite([](Checkpoint &c) { c.tensors[0] = test::make_record("layer0.weight", NNRT_DTYPE_F32, {4, 6}, 1); });
  EXPECT_NE(load_error().find("needs F32 [6, 4]"), std::string::npos);
  m->save(path);
  rewrite([](Checkpoint &c) { c.tensors[0] = test::make_record("layer0.weight", NNRT_DTYPE_F64, {6, 4}, 1); });
  EXPECT_NE(load_error().find("is F64 [6, 4]"), std::string::npos);
  m->save(path);
  rewrite([](Checkpoint &c) { c.tensors.push_back(test::make_record("layer9.weight", NNRT_DTYPE_F32, {2}, 1)); });
  EXPECT_NE(load_error().find("\"layer9.weight\" is neither a parameter"), std::string::npos);
  // Optimizer state is allowed (a trainer's checkpoint loads as a model).
  m->save(path);
  rewrite([](Checkpoint &c) {
    c.tensors.push_back(test::make_record("optim.layer0.bias.state0", NNRT_DTYPE_F32, {6}, 1));
  });
  EXPECT_EQ(param_bytes(*model::Model::load(ctx, path)), param_bytes(*m));
}

class TrainerCheckpoint : public ModelCheckpoint {
 protected:
  void SetUp() override {
    ModelCheckpoint::SetUp();
    trainer =
        std::make_unique<train::Trainer>(m, train::TrainerOptions::parse(R"({"optimizer": {"type": "adam"}})", *ctx));
    float xv[8 * 4];
    int32_t yv[8];
    for (int i = 0; i < 32; ++i) xv[i] = static_cast<float>((i * 37) % 11) / 11.0f - 0.5f;
    for (int i = 0; i < 8; ++i) yv[i] = i % 3;
    x = ops::from_host(*ctx, NNRT_DTYPE_F32, {8, 4}, xv, sizeof xv);
    y = ops::from_host(*ctx, NNRT_DTYPE_I32, {8}, yv, sizeof yv);
    trainer->step(x, y);
    trainer->save(path);
    trainer->step(x, y);  // moves on, so that a restore that wrongly succeeded would show
  }

  // Restores and expects `status`; the model's parameters and the next loss must be as before.
  std::string restore_error(nnrt_status status) {
    std::vector<unsigned char> before = param_bytes(*m);
    std::string message;
    try {
      trainer->restore(path);
      ADD_FAILURE() << "the restore succeeded";
    } catch (const Error &e) {
      EXPECT_EQ(e.status(), status) << e.what();
      message = e.what();
    }
    EXPECT_EQ(param_bytes(*m), before) << "a failed restore changed the model";
    return message;
  }

  std::unique_ptr<train::Trainer> trainer;
  Array x, y;
};

TEST_F(TrainerCheckpoint, RestoresAndContinuesExactly) {
  double expected = trainer->step(x, y);
  trainer->restore(path);
  trainer->step(x, y);
  EXPECT_EQ(trainer->step(x, y), expected);
  Checkpoint c = read_checkpoint(path);
  for (const char *name : {"optim.layer0.weight.state0", "optim.layer0.weight.state1", "optim.layer1.bias.state1"}) {
    EXPECT_NE(c.find(name), nullptr) << name;
  }
  Json state = Json::parse(c.metadata.at(kTrainerKey));
  EXPECT_EQ(state["optimizer"], "adam");
  EXPECT_EQ(state["iteration"], 1);
}

TEST_F(TrainerCheckpoint, DamagedStateIsCorruptAndChangesNothing) {
  Checkpoint good = read_checkpoint(path);
  auto damage = [&](auto change) {
    Checkpoint c = good;
    change(c);
    write_checkpoint(path, c);
  };
  damage([](Checkpoint &c) { c.metadata[kTrainerKey] = "{\"optimizer\": \"adam\"}"; });
  EXPECT_NE(restore_error(NNRT_ERR_CORRUPT).find("nnrt.trainer.states is required"), std::string::npos);
  damage([](Checkpoint &c) {
    Json j = Json::parse(c.metadata[kTrainerKey]);
    j["iteration"] = -4;
    c.metadata[kTrainerKey] = j.dump();
  });
  EXPECT_NE(restore_error(NNRT_ERR_CORRUPT).find("nnrt.trainer.iteration"), std::string::npos);
  damage([](Checkpoint &c) {
    Json j = Json::parse(c.metadata[kTrainerKey]);
    j["surprise"] = 1;
    c.metadata[kTrainerKey] = j.dump();
  });
  EXPECT_NE(restore_error(NNRT_ERR_CORRUPT).find("surprise"), std::string::npos);
  damage([](Checkpoint &c) { c.metadata[kTrainerKey] = "not json"; });
  restore_error(NNRT_ERR_CORRUPT);
  damage([](Checkpoint &c) {
    for (size_t i = 0; i < c.tensors.size(); ++i)
      if (c.tensors[i].name == "optim.layer1.weight.state1") c.tensors.erase(c.tensors.begin() + static_cast<long>(i));
  });
  EXPECT_NE(restore_error(NNRT_ERR_CORRUPT).find("\"optim.layer1.weight.state1\" is missing"), std::string::npos);
  damage([](Checkpoint &c) {
    c.tensors.push_back(test::make_record("optim.layer1.weight.state2", NNRT_DTYPE_F32, {1}, 1));
  });
  EXPECT_NE(restore_error(NNRT_ERR_CORRUPT).find("\"optim.*\" tensors"), std::string::npos);
  damage([](Checkpoint &c) {
    for (TensorRecord &t : c.tensors)
      if (t.name == "optim.layer0.bias.state0") t = test::make_record(t.name, NNRT_DTYPE_F32, {7}, 1);
  });
  EXPECT_NE(restore_error(NNRT_ERR_CORRUPT).find("needs F32 [6]"), std::string::npos);
  damage([](Checkpoint &c) {
    Json j = Json::parse(c.metadata[kTrainerKey]);
    j["states"] = 1;
    c.metadata[kTrainerKey] = j.dump();
  });
  EXPECT_NE(restore_error(NNRT_ERR_INVALID_ARGUMENT).find("keeps 1 state arrays"), std::string::npos);
}

}  // namespace
}  // namespace nnrt::io
