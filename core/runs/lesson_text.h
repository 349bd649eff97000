#pragma once
// Every sentence the lesson shows, written once here: the window's lesson panel, its tests
// and lesson.cpp read them from this table. The outcomes' words and the views that prove
// them are in lesson.h's tables beside the rules they belong to.
namespace normlab::lesson_text {

inline constexpr const char* kTitle = "Predict, then watch";
inline constexpr const char* kOffer =
    "Learn what the norm's place does by predicting it. For each of the course's five runs you say first "
    "whether it will learn, stall on the baseline or diverge; then it trains beside the others and its "
    "verdict shows whether you were right, with the view that proves it.";
inline constexpr const char* kBegin = "Start the lesson";
inline constexpr const char* kNotNow = "Not now";
inline constexpr const char* kWaitingForDevice = "Looking for a GPU first: the course's size depends on it.";
inline constexpr const char* kReadOnly = "Another NormLab owns this runs folder: the lesson cannot train here.";

inline constexpr const char* kQuestionOf = "Question %1 of %2";  // its number, how many
inline constexpr const char* kFurtherQuestion = "Your experiment";
inline constexpr const char* kSeenSoFar = "Seen so far";
inline constexpr const char* kNothingSeen = "Nothing yet: this is the first run.";
inline constexpr const char* kPredict = "Your prediction:";
inline constexpr const char* kYouSaid = "You said: %1.";  // the choice, lower case
inline constexpr const char* kTraining = "Training, step %1 of %2. Its verdict so far: %3.";
inline constexpr const char* kQueued = "Waiting in the queue behind the runs before it.";
inline constexpr const char* kGoOnWhileTraining = "You can go on: the answer will wait for you in the summary.";
inline constexpr const char* kReused = "Trained before with the same settings: the answer is that run's.";
inline constexpr const char* kUnclear =
    "The run ended before its fate was clear (%1). Train it on to get the answer.";  // its status
inline constexpr const char* kTrainOn = "Train it on";
inline constexpr const char* kRight = "Right:";
inline constexpr const char* kWrong = "Not this time:";
inline constexpr const char* kYouSaidAfter = "you said %1";  // the choice, lower case
inline constexpr const char* kSee = "See %1.";
inline constexpr const char* kNext = "Next question";
inline constexpr const char* kToSummary = "To the summary";
inline constexpr const char* kLeave = "Leave the lesson";
inline constexpr const char* kLeftNote = "Lesson left: Run \u25b8 Lesson takes it up where it was.";

inline constexpr const char* kSummary = "What you predicted, and what happened";
inline constexpr const char* kScore = "You predicted %1 of %2 runs right.";
inline constexpr const char* kStillTraining = "%1 still training: their answers come in here.";
inline constexpr const char* kPending = "still training";
inline constexpr const char* kSeenRow = "you said %1; %2";  // the choice and what happened, lower case
inline constexpr const char* kWhatItShows = "What the runs show";
// The course's conclusion, in NormLab's words.
inline constexpr const char* kConclusion =
    "Where the norm sits decided which runs trained. Pre-norm normalises only what enters each sub-layer, so "
    "the residual stream runs from the loss back to the first layer untouched and the gradient arrives whole: "
    "it learnt at both learning rates after a 30-step warmup. Post-norm normalises the stream itself after "
    "every addition, and the update fades on its way down: with the same short warmup its first layers "
    "hardly moved, and it settled on the unigram baseline, knowing which tokens are frequent and nothing of "
    "what came before them. Taken slowly, with a long warmup, post-norm got off the baseline and learnt about "
    "as well as pre-norm. Post-norm can train, but only with gentle first steps; pre-norm needs no such care, "
    "which is why deep Transformers put the norm first.";
inline constexpr const char* kFurther = "One more experiment";
inline constexpr const char* kFurtherHelp =
    "Choose a design of your own: more layers, another warmup or learning rate. Predict, then watch.";
inline constexpr const char* kPlacement = "Norm";
inline constexpr const char* kLayers = "Layers";
inline constexpr const char* kWarmup = "Warmup steps";
inline constexpr const char* kLearningRate = "Learning rate";
inline constexpr const char* kAsk = "Ask this question";
inline constexpr const char* kStartOver = "Start the lesson again";

}  // namespace normlab::lesson_text
