#include "advisor/workload.h"

#include <gtest/gtest.h>

#include "advisor/test_models.h"

namespace suanli::advisor {
namespace {

using namespace suanli::advisor::testing;

Workload Make(ModelSpec model, Task task) {
  Workload w;
  w.model = std::move(model);
  w.task = task;
  return w;
}

void ExpectInvalid(Workload w, std::string_view expected) {
  const core::Status status = CompleteAndValidate(w);
  ASSERT_FALSE(status.ok()) << "expected an error containing: " << expected;
  EXPECT_EQ(status.code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
}

TEST(WorkloadTest, NamesParseAndUnknownOnesListTheChoices) {
  EXPECT_EQ(*ParseTask("QLoRA"), Task::kQlora);
  EXPECT_EQ(*ParseEngine("llama.cpp"), Engine::kLlamaCpp);
  EXPECT_EQ(*ParsePrecision("fp8"), Precision::kFp8);
  EXPECT_DOUBLE_EQ(ParseQuantization("Q4_K_M")->bits_per_weight, 4.85);
  EXPECT_TRUE(ParseQuantization("q4_0")->gguf);
  const core::Status engine = ParseEngine("deepspeed").status();
  EXPECT_NE(engine.message().find("unknown engine 'deepspeed'; choose from pytorch, vllm"),
            std::string::npos);
  EXPECT_FALSE(ParseTask("pretrain").ok());
  EXPECT_FALSE(ParsePrecision("int3").ok());
  EXPECT_FALSE(ParseQuantization("q9_k").ok());
}

TEST(WorkloadTest, FillsDefaultsTheAnswerThenStates) {
  Workload serve = Make(Llama3_8b(), Task::kServe);
  ASSERT_TRUE(CompleteAndValidate(serve).ok());
  EXPECT_EQ(serve.engine, Engine::kVllm);
  EXPECT_EQ(serve.batch, 0);  // the largest that fits, found per GPU
  EXPECT_TRUE(serve.work.assumed);

  Workload gguf = Make(Llama3_8b(), Task::kInfer);
  gguf.quant = *ParseQuantization("q4_k_m");
  ASSERT_TRUE(CompleteAndValidate(gguf).ok());
  EXPECT_EQ(gguf.engine, Engine::kLlamaCpp);

  Workload qlora = Make(Llama2_7b(), Task::kQlora);
  ASSERT_TRUE(CompleteAndValidate(qlora).ok());
  ASSERT_TRUE(qlora.quant.has_value());
  EXPECT_EQ(qlora.quant->name, "nf4");
  EXPECT_EQ(qlora.seq, 2048);

  Workload given = Make(Llama2_7b(), Task::kLora);
  given.work.tokens = 5e6;
  ASSERT_TRUE(CompleteAndValidate(given).ok());
  EXPECT_FALSE(given.work.assumed);
}

TEST(WorkloadTest, RefusesASequenceLongerThanTheContext) {
  Workload w = Make(Llama2_7b(), Task::kLora);
  w.seq = 8192;
  ExpectInvalid(w, "--seq 8192 is longer than llama-2-7b's context of 4096 tokens");
  Workload infer = Make(Llama2_7b(), Task::kInfer);
  infer.prompt_tokens = 4000;
  infer.gen_tokens = 200;
  ExpectInvalid(infer, "(4200) is longer than llama-2-7b's context");
}

TEST(WorkloadTest, RefusesQuantisationsTheTaskCannotUse) {
  Workload qlora = Make(Llama2_7b(), Task::kQlora);
  qlora.quant = *ParseQuantization("int8");
  ExpectInvalid(qlora, "QLoRA needs 4-bit weights");
  Workload full = Make(Llama2_7b(), Task::kFinetune);
  full.quant = *ParseQuantization("int4");
  ExpectInvalid(full, "full training updates 16-bit weights");
  Workload lora = Make(Llama2_7b(), Task::kLora);
  lora.quant = *ParseQuantization("nf4");
  ExpectInvalid(lora, "use --task qlora");
  Workload gguf = Make(Llama2_7b(), Task::kServe);
  gguf.quant = *ParseQuantization("q4_0");
  gguf.engine = Engine::kVllm;
  gguf.engine_given = true;
  ExpectInvalid(gguf, "GGUF formats such as q4_0 run on llama.cpp");
  Workload fp8 = Make(Llama2_7b(), Task::kInfer);
  fp8.precision = Precision::kFp8;
  fp8.quant = *ParseQuantization("int4");
  ExpectInvalid(fp8, "--precision fp8 already stores 8-bit weights");
}

TEST(WorkloadTest, Int8IsForInferenceOnly) {
  EXPECT_EQ(*ParsePrecision("INT8"), Precision::kInt8);
  for (Task task : {Task::kTrain, Task::kFinetune, Task::kLora}) {
    Workload train = Make(Llama2_7b(), task);
    train.precision = Precision::kInt8;
    ExpectInvalid(train, "--precision int8 is for inference");
  }
  Workload cnn = Make(ResNet50(), Task::kTrain);
  cnn.precision = Precision::kInt8;
  ExpectInvalid(cnn, "train in bf16 or fp16, or fp8 on Ada and Hopper");
  Workload quantised = Make(Llama2_7b(), Task::kServe);
  quantised.precision = Precision::kInt8;
  quantised.quant = *ParseQuantization("int4");
  ExpectInvalid(quantised, "--precision int8 already stores 8-bit weights");
  Workload gguf = Make(Llama2_7b(), Task::kInfer);
  gguf.precision = Precision::kInt8;
  gguf.engine = Engine::kLlamaCpp;
  gguf.engine_given = true;
  ExpectInvalid(gguf, "use --quant q8_0");
  for (ModelSpec model : {ResNet50(), Llama2_7b()}) {
    Workload infer = Make(model, Task::kInfer);
    infer.precision = Precision::kInt8;
    EXPECT_TRUE(CompleteAndValidate(infer).ok()) << model.name;
  }
}

TEST(WorkloadTest, RefusesFlagsThatDoNotApplyToTheModel) {
  Workload train = Make(Llama2_7b(), Task::kTrain);
  train.engine = Engine::kVllm;
  train.engine_given = true;
  ExpectInvalid(train, "--engine vllm serves models and does not train them");
  Workload resnet = Make(ResNet50(), Task::kTrain);
  resnet.seq = 512;
  ExpectInvalid(resnet, "resnet-50 does not take --seq");
  Workload llm = Make(Llama2_7b(), Task::kInfer);
  llm.steps = 20;
  ExpectInvalid(llm, "does not take --image-size or --steps");
  Workload negative = Make(Llama2_7b(), Task::kInfer);
  negative.batch = -1;
  ExpectInvalid(negative, "counts must be positive");
}

}  // namespace
}  // namespace suanli::advisor
