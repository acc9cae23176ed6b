//===- Metrics.h - Per-epoch metrics and the progress line ----*- C++ -*-===//
//
// Metrics are JSON lines. An epoch record at each epoch end (and at the end
// of the run) holds the test metrics too, for example
//
//   {"type":"epoch","epoch":1,"step":97,"train_loss":1.52,"train_acc":0.45,
//    "test_loss":1.31,"test_acc":0.53,"lr":0.08,"elapsed_s":3.2,
//    "epoch_seconds":2.9,"eval_seconds":0.3,"images_per_second":31000.5}
//
// and on the last line of a run also "final":true. With --log-every N a
// step record every N steps holds the training metrics of the steps since
// the previous record:
//
//   {"type":"step","epoch":0.31,"step":30,"train_loss":1.9,"train_acc":0.3,
//    "lr":0.05,"elapsed_s":1.0,"images_per_second":30500.0}
//
// With --eval=both, epoch records add "raw_test_loss" and "raw_test_acc"
// (the raw weights; test_* are then the EMA weights'). Fields that do not
// apply are null (train_* under --eval-only, test_* with an empty test set).
// A value that is not finite (the train_loss of a diverged run) is written
// as the string "NaN", "Infinity" or "-Infinity", never as null.
// "epoch" is completed epochs, step / steps_per_epoch: an integer at epoch
// ends, fractional where a record falls inside an epoch.
// "lr" is the learning rate of the last optimizer step before the line (the
// schedule's base rate times its factor, before any parameter group's
// lr_scale); null before the first step. "epoch_seconds" is the training
// time of the epoch's steps (of this run), "eval_seconds" the evaluation's;
// "images_per_second" the training images of the record over its training
// time. docs/training.md#metrics is the reference.
//
// The --metrics file is opened once, in append mode, and each line goes out
// with one write(2) and is flushed at once: a crash loses at most the line
// being written, readers (tail -f) see whole lines, and a resumed run
// appends to the lines of the run it continues. A fresh run (no --resume)
// truncates the file first.
//
// The progress line goes to stderr only when it is a terminal and --quiet
// is not given; it is rewritten in place with '\r' at most 10 times per
// second and erased before anything else is printed.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_METRICS_H
#define TCC_RUNTIME_TRAINER_METRICS_H

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace tcc::rt {

struct EpochMetrics {
  bool stepRecord = false; ///< a --log-every record (no test fields)
  double epoch = 0; ///< completed epochs (written as an integer when whole)
  int64_t step = 0;
  std::optional<double> trainLoss, trainAcc, testLoss, testAcc;
  /// --eval=both: the raw weights' test metrics (the fields are written).
  bool rawToo = false;
  std::optional<double> rawTestLoss, rawTestAcc;
  std::optional<double> lr; ///< of the last step taken
  double elapsedS = 0;
  std::optional<double> epochSeconds, evalSeconds;
  std::optional<double> imagesPerSecond;
  /// fp16 loss scaling (the model keeps amp.* state): the scale now, and
  /// the steps skipped for an inf or nan gradient since the run began.
  std::optional<double> lossScale;
  std::optional<int64_t> skippedSteps;
  bool final = false;
};

/// One JSON object, no newline.
std::string metricsLine(const EpochMetrics &m);

class MetricsFile {
public:
  MetricsFile() = default;
  MetricsFile(const MetricsFile &) = delete;
  MetricsFile &operator=(const MetricsFile &) = delete;
  ~MetricsFile();

  /// Opens `path` for appending (truncating it first unless `append`).
  bool open(const std::string &path, bool append, std::string &error);
  bool isOpen() const { return fd >= 0; }
  /// Writes `line` + '\n' with one write(2).
  bool writeLine(const std::string &line, std::string &error);

private:
  int fd = -1;
  std::string path;
};

/// The in-place progress line on a terminal.
class ProgressLine {
public:
  /// `clock` returns seconds (monotonic); by default the steady clock.
  ProgressLine(std::ostream &out, bool enabled,
               std::function<double()> clock = nullptr);
  /// Shows `text` unless the last update was less than 0.1 s ago (`force`
  /// shows it anyway).
  void update(const std::string &text, bool force = false);
  /// Erases the line (before printing other output).
  void clear();
  bool enabled() const { return on; }

private:
  std::ostream *out;
  bool on;
  std::function<double()> clock;
  double last = -1e300;
  size_t shown = 0; ///< width of what is on the line
};

/// Seconds from the steady clock.
double steadySeconds();

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_METRICS_H
