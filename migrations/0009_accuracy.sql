-- Function accuracy: corrections (ground truth), their field-by-field outcomes, evaluations,
-- regression calls and score runs. See src/accuracy/ for what each number means.

-- Metrics and review count a function version's outputs.
CREATE INDEX events_function ON events(function_id, function_version_num);

-- One correction per event; submitting again overwrites. `tp`…`tn` are the event's field
-- outcomes summed, so function metrics are one grouped SUM.
CREATE TABLE corrections (
    event_id              TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL,
    environment           TEXT NOT NULL,
    function_id           TEXT NOT NULL,
    function_version_num  BIGINT NOT NULL,
    function_type         TEXT NOT NULL,
    call_id               TEXT,
    reference_id          TEXT,
    correction            TEXT NOT NULL,
    order_matching        BIGINT NOT NULL,
    tp                    BIGINT NOT NULL,
    fp                    BIGINT NOT NULL,
    fn                    BIGINT NOT NULL,
    tn                    BIGINT NOT NULL,
    is_regression         BIGINT NOT NULL,
    created_at            BIGINT NOT NULL
);
CREATE INDEX corrections_function ON corrections(account_id, environment, function_id, function_version_num);

-- The outcome of each field of a corrected event: 'tp', 'fp', 'fn' or 'tn'.
CREATE TABLE correction_fields (
    event_id              TEXT NOT NULL REFERENCES corrections(event_id) ON DELETE CASCADE,
    function_id           TEXT NOT NULL,
    function_version_num  BIGINT NOT NULL,
    path                  TEXT NOT NULL,
    outcome               TEXT NOT NULL,
    PRIMARY KEY (event_id, path)
);
CREATE INDEX correction_fields_function ON correction_fields(function_id, function_version_num);

-- One evaluation per event (the latest asked for); `confidence` is the output's overall score.
CREATE TABLE evaluations (
    event_id              TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL,
    environment           TEXT NOT NULL,
    transformation_id     TEXT NOT NULL,
    function_id           TEXT NOT NULL,
    function_version_num  BIGINT NOT NULL,
    evaluation_version    TEXT NOT NULL,
    is_regression         BIGINT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
    confidence            DOUBLE PRECISION,
    result                TEXT,
    error                 TEXT,
    created_at            BIGINT NOT NULL,
    finished_at           BIGINT
);
CREATE INDEX evaluations_function ON evaluations(account_id, environment, function_id, function_version_num);

-- Calls made by a regression run, each tied to the corrected event whose input it replays.
CREATE TABLE regression_calls (
    call_id               TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL,
    environment           TEXT NOT NULL,
    function_id           TEXT NOT NULL,
    baseline_version_num  BIGINT NOT NULL,
    comparison_version_num BIGINT NOT NULL,
    original_event_id     TEXT NOT NULL,
    original_reference_id TEXT NOT NULL,
    created_at            BIGINT NOT NULL
);
CREATE INDEX regression_calls_function ON regression_calls(account_id, environment, function_id, comparison_version_num);

-- Score runs: a function run over (input, expected) pairs, compared on every read.
CREATE TABLE score_runs (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL,
    environment           TEXT NOT NULL,
    function_name         TEXT NOT NULL,
    function_version_num  BIGINT NOT NULL,
    cancelled             BIGINT NOT NULL,
    created_at            BIGINT NOT NULL
);

CREATE TABLE score_pairs (
    run_id      TEXT NOT NULL REFERENCES score_runs(id) ON DELETE CASCADE,
    pair_index  BIGINT NOT NULL,
    call_id     TEXT NOT NULL,
    expected    TEXT NOT NULL,
    PRIMARY KEY (run_id, pair_index)
);
