#include "core/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

namespace suanli::core {
namespace {

TEST(StatusTest, DefaultIsOkAndErrorsCarryCodeAndMessage) {
  EXPECT_TRUE(Status().ok());
  Status status = NotFoundError("no GPU named 'rtx9999'");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(), "NOT_FOUND: no GPU named 'rtx9999'");
}

TEST(StatusTest, WithContextPrefixesTheMessageAndKeepsTheCode) {
  Status status = InvalidArgumentError("line 3: bad").WithContext("data/gpus.yaml");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "data/gpus.yaml: line 3: bad");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

TEST(StatusTest, EveryCodeMapsToADistinctExitCodeAndAnHttpErrorStatus) {
  const StatusCode codes[] = {
      StatusCode::kInvalidArgument,    StatusCode::kNotFound,          StatusCode::kAlreadyExists,
      StatusCode::kFailedPrecondition, StatusCode::kResourceExhausted, StatusCode::kUnauthenticated,
      StatusCode::kPermissionDenied,   StatusCode::kUnavailable,       StatusCode::kInternal};
  std::set<int> exit_codes;
  for (StatusCode code : codes) {
    EXPECT_NE(ExitCodeFor(code), 0) << StatusCodeName(code);
    EXPECT_GE(HttpStatusFor(code), 400) << StatusCodeName(code);
    exit_codes.insert(ExitCodeFor(code));
  }
  EXPECT_EQ(exit_codes.size(), std::size(codes));
  EXPECT_EQ(ExitCodeFor(StatusCode::kOk), 0);
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
}

TEST(ResultTest, HoldsAValueOrAnError) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  EXPECT_TRUE(good.status().ok());

  Result<int> bad = InvalidArgumentError("negative count");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ResultTest, MovesOutMoveOnlyValues) {
  Result<std::unique_ptr<int>> result = std::make_unique<int>(7);
  std::unique_ptr<int> owned = std::move(result).value();
  EXPECT_EQ(*owned, 7);
}

TEST(ResultDeathTest, ReadingTheValueOfAnErrorCrashesWithTheError) {
  Result<int> bad = NotFoundError("no such pod");
  EXPECT_DEATH((void)bad.value(), "no such pod");
}

TEST(ResultDeathTest, AnOkStatusIsNotAnError) {
  EXPECT_DEATH((void)Result<int>(Status::Ok()), "never an OK Status");
}

Status FailsWhenNegative(int n) {
  if (n < 0) return InvalidArgumentError("negative");
  return Status::Ok();
}

Status Chain(int n) {
  SUANLI_RETURN_IF_ERROR(FailsWhenNegative(n));
  return AlreadyExistsError("reached the end");
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstFailure) {
  EXPECT_EQ(Chain(-1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Chain(1).code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace suanli::core
