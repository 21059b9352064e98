"""Splink (DuckDB) on the records canon's resolution benchmark seeds, for comparison.

Usage: splink_run.py RECORDS.csv febrl|publications|books|companies names|all OUT.json
Writes {"auto": [[i, j], ...], "suggested": [[i, j], ...], "scores": [[i, j, p], ...]}:
record pairs (row numbers) clustered together at match probability 0.95, pairs scored at
least 0.80 -- the same thresholds canon's defaults use (fixed before these sets were run;
none chosen on them) -- and every predicted pair scoring at least 0.01 with its probability,
from which the benchmark reports Splink at 0.5 and at its best threshold.

Configured as Splink's documentation and examples do: term-frequency adjustments on the
name columns, blocking on name tokens too (each word of 3 letters or more, exploded), EM
trained on blocking rules that leave each comparison out once.
"""

import json
import sys

import duckdb
import splink.comparison_library as cl
from splink import DuckDBAPI, Linker, SettingsCreator, block_on

path, kind, mode, out = sys.argv[1:5]
con = duckdb.connect()
columns = {
    "febrl": ["given_name", "surname", "address", "suburb", "postcode", "state", "date_of_birth", "soc_sec_id"],
    "publications": ["title", "authors", "year"],
    "books": ["title", "author", "publisher"],
    "companies": ["title"],
}[kind]
select = ", ".join(f"NULLIF(trim(CAST({c} AS VARCHAR)), '') AS {c}" for c in columns)
con.execute(
    f"CREATE TABLE records AS SELECT CAST(unique_id AS BIGINT) AS unique_id, {select} "
    f"FROM read_csv('{path}', header=true, all_varchar=true, quote='\"', escape='\"')"
)
if kind in ("publications", "books", "companies"):
    # Titles compared case-blind, as canon's normaliser does, and blocked on their start
    # too (what a Splink user would write).
    con.execute("UPDATE records SET title = lower(title)")
    con.execute("ALTER TABLE records ADD COLUMN title_start VARCHAR")
    con.execute("UPDATE records SET title_start = substr(title, 1, 12)")
name_sql = {
    "febrl": "concat_ws(' ', given_name, surname)",
    "publications": "title",
    "books": "title",
    "companies": "title",
}[kind]
con.execute("ALTER TABLE records ADD COLUMN name_tokens VARCHAR[]")
con.execute(
    f"UPDATE records SET name_tokens = list_filter("
    f"regexp_split_to_array(lower(coalesce({name_sql}, '')), '[^a-z0-9]+'), lambda t: length(t) >= 3)"
)
db_api = DuckDBAPI(connection=con)
table = db_api.register("records")

if kind == "febrl":
    comparisons = [cl.NameComparison("given_name"), cl.NameComparison("surname")]
    blocking = [block_on("given_name"), block_on("surname")]
    deterministic = [block_on("given_name", "surname")]
    em_rules = [block_on("given_name"), block_on("surname")]
    if mode == "all":
        comparisons += [
            cl.JaroWinklerAtThresholds("address", [0.9, 0.8]),
            cl.ExactMatch("suburb"),
            cl.LevenshteinAtThresholds("postcode", [1, 2]),
            cl.ExactMatch("state"),
            cl.LevenshteinAtThresholds("date_of_birth", [1, 2]),
            cl.LevenshteinAtThresholds("soc_sec_id", [1, 2]),
        ]
        blocking += [block_on("date_of_birth"), block_on("soc_sec_id"), block_on("postcode")]
        deterministic = [block_on("given_name", "surname", "date_of_birth")]
        em_rules = [block_on("given_name", "surname"), block_on("date_of_birth")]
elif kind in ("books", "companies"):
    comparisons = [cl.JaroWinklerAtThresholds("title", [0.95, 0.88, 0.8])]
    blocking = [block_on("title"), block_on("title_start")]
    deterministic = [block_on("title")]
    em_rules = [block_on("title_start")]
    if mode == "all":
        comparisons += [
            cl.JaroWinklerAtThresholds("author", [0.9, 0.8]),
            cl.JaroWinklerAtThresholds("publisher", [0.9, 0.8]),
        ]
        blocking += [block_on("author")]
        deterministic = [block_on("title", "author")]
        em_rules = [block_on("title_start"), block_on("author")]
else:
    comparisons = [cl.JaroWinklerAtThresholds("title", [0.95, 0.88, 0.8])]
    blocking = [block_on("title"), block_on("title_start")]
    deterministic = [block_on("title")]
    em_rules = [block_on("title_start")]
    if mode == "all":
        comparisons += [cl.JaroWinklerAtThresholds("authors", [0.9, 0.8]), cl.ExactMatch("year")]
        blocking += [block_on("authors")]
        deterministic = [block_on("title", "year")]
        em_rules = [block_on("title"), block_on("year")]

names = {"febrl": ["given_name", "surname"], "publications": ["title"], "books": ["title"], "companies": ["title"]}[kind]
# The name comparisons come first in every list above.
comparisons = [c.configure(term_frequency_adjustments=True) for c in comparisons[: len(names)]] + comparisons[
    len(names) :
]
blocking.append(block_on("name_tokens", arrays_to_explode=["name_tokens"]))

settings = SettingsCreator(
    link_type="dedupe_only",
    unique_id_column_name="unique_id",
    comparisons=comparisons,
    blocking_rules_to_generate_predictions=blocking,
    retain_intermediate_calculation_columns=False,
)
linker = Linker(table, settings, log_level=None)
linker.training.estimate_probability_two_random_records_match(deterministic, recall=0.7)
linker.training.estimate_u_using_random_sampling(max_pairs=1e6, seed=1)
for rule in em_rules:
    linker.training.estimate_parameters_using_expectation_maximisation(rule)
predictions = linker.inference.predict(threshold_match_probability=0.01)
scores = con.execute(
    f"SELECT unique_id_l, unique_id_r, match_probability FROM {predictions.physical_name}"
).fetchall()
suggested = [(a, b) for a, b, p in scores if p >= 0.80]
clusters = linker.clustering.cluster_pairwise_predictions_at_threshold(predictions, 0.95)
rows = con.execute(f"SELECT cluster_id, unique_id FROM {clusters.physical_name}").fetchall()
members = {}
for cluster, uid in rows:
    members.setdefault(cluster, []).append(int(uid))
auto = []
for ids in members.values():
    ids.sort()
    auto += [[a, b] for n, a in enumerate(ids) for b in ids[n + 1 :]]
with open(out, "w") as f:
    json.dump(
        {
            "auto": auto,
            "suggested": [[int(a), int(b)] for a, b in suggested],
            "scores": [[int(a), int(b), float(p)] for a, b, p in scores],
        },
        f,
    )
