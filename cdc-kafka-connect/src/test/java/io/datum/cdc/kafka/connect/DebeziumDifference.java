package io.datum.cdc.kafka.connect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Every way our records may differ from Debezium 3.6.1's for the same change: the list of
 * docs/kafka-connect-types.md's table "Where we differ from Debezium 3.6.1" (same ids, in the same
 * order; {@code DebeziumOracleTest} checks both ways). A difference with a matcher is one {@code
 * DebeziumOracleTest} produces and must see; one without is documented but not produced by its
 * workload (an option, a table shape or a value it does not use), with the reason in {@link
 * #notExercised}. Matchers name the test table's columns ({@code mn} is its {@code money} column).
 */
enum DebeziumDifference {
  SOURCE_FIELDS(
      "source-fields",
      s ->
          s.path()
                  .matches(
                      "value/(schema|payload)/source/"
                          + "(commit_lsn|tx_end_lsn|event_index|event_count|snapshot_id|snapshot_chunk)")
              && s.debezium().isNull()),
  OPTIONAL_FIELDS(
      "optional-fields",
      s ->
          s.path().matches("(key/schema|value/schema/(after|before))/[^/]+/optional")
              && !s.debezium().asBoolean(true)
              && s.ours().asBoolean(false)),
  COLUMN_DEFAULTS(
      "column-defaults",
      s ->
          (s.path().matches("(key/schema|value/schema/(after|before))/[^/]+/default")
                  && s.ours().isNull())
              || (s.path().equals("value/payload/before/i4") // NOT NULL DEFAULT 0
                  && "d".equals(s.op())
                  && s.debezium().asInt(-1) == 0
                  && s.ours().isNull())),
  TRANSACTION_BLOCK(
      "transaction-block",
      "Debezium runs with provide.transaction.metadata=true here, to compare the blocks"),
  TRANSACTION_ID(
      "transaction-id",
      s ->
          s.path().equals("value/payload/transaction/id")
              && s.debezium().asText().split(":")[0].equals(s.ours().asText().split(":")[0])),
  SNAPSHOT_MARKERS(
      "snapshot-markers",
      s ->
          s.path().equals("value/payload/source/snapshot")
              && Set.of("first", "first_in_data_collection", "last")
                  .contains(s.debezium().asText())),
  SNAPSHOT_TXID(
      "snapshot-txid",
      s -> s.snapshot() && s.path().equals("value/payload/source/txId") && s.ours().isNull()),
  SNAPSHOT_INFINITE_DATE(
      "snapshot-infinite-date",
      s ->
          s.snapshot()
              && s.path().equals("value/payload/after/d")
              && s.debezium().asLong() == -622191234L),
  NUMERIC_SCALE(
      "numeric-scale",
      s -> s.path().matches("value/payload/(after|before)/(n|nu\\[\\d+\\])/(scale|value)")),
  MONEY("money", column("mn")),
  GEOMETRIC("geometric-and-other-types", column("(pt|b1|bt|vb)")),
  KEPT_COLUMNS(
      "kept-columns",
      s ->
          s.path().matches("value/(schema|payload)/(after|before)/(cp|acp|api|ia|ma)")
              && s.debezium().isNull()),
  ENUM_ARRAY_NULLS(
      "enum-array-null-elements",
      s ->
          s.path().matches("value/schema/(after|before)/am/items/optional")
              || (s.path().matches("value/payload/(after|before)/am") && s.debezium().isNull())),
  NAME_COLUMNS(
      "name-columns",
      s ->
          !s.snapshot()
              && s.path().matches("value/payload/(after|before)/nm")
              && s.debezium().isNull()),
  MESSAGE_TIME(
      "message-time",
      s -> s.topic().equals("message") && s.path().matches("value/payload/source/ts_(ms|us|ns)")),
  OUR_HEADERS("datum-headers", s -> s.path().startsWith("header/datum.") && s.debezium().isNull()),
  TRUNCATE_DEFAULT("truncate-default", "Debezium runs with skipped.operations=none here"),
  USING_INDEX_KEY("using-index-key", "no table with REPLICA IDENTITY USING INDEX"),
  MULTI_DIMENSIONAL_ARRAYS("multi-dimensional-arrays", "Debezium drops or fails on them"),
  SPECIAL_TEMPORALS("special-temporals", "timetz 24:00 and infinite intervals fail Debezium"),
  TIME_PRECISION_MODES("time-precision-modes", "an option Debezium has and we do not"),
  PARTIAL_TRANSACTION("partial-transaction", "needs a task restart inside a transaction");

  /** What a matcher sees of one difference. */
  record Seen(
      boolean snapshot, String topic, String op, String path, JsonNode debezium, JsonNode ours) {}

  final String id;
  final Predicate<Seen> matcher;
  final String notExercised;

  DebeziumDifference(String id, Predicate<Seen> matcher) {
    this.id = id;
    this.matcher = matcher;
    this.notExercised = null;
  }

  DebeziumDifference(String id, String notExercised) {
    this.id = id;
    this.matcher = s -> false;
    this.notExercised = notExercised;
  }

  /** Any difference in the schema or value of one column of the test table. */
  private static Predicate<Seen> column(String name) {
    return s -> s.path().matches("value/(schema|payload)/(after|before)/" + name + "(/.*)?");
  }
}
