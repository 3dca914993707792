package io.datum.cdc.samples.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What the sample checks of a record the connector wrote: its topic, the envelope's {@code op}
 * ({@code r}ead, {@code c}reate, {@code u}pdate, {@code d}elete, or {@code tombstone} for the null
 * value after a delete), its key and the envelope's {@code after} row (null for a delete and a
 * tombstone), as JSON without schemas.
 *
 * @param topic the topic, {@code <topic.prefix>.<schema>.<table>}
 * @param op the operation
 * @param key the key, {@code {"id":1}}
 * @param after the row after the change, or null
 */
record ChangeRecord(String topic, String op, JsonNode key, JsonNode after) {

  static final String TOMBSTONE = "tombstone";

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Reads a record of the worker's JsonConverter (schemas disabled).
   *
   * @param r the record
   * @return its topic, op, key and after row
   */
  static ChangeRecord of(ConsumerRecord<byte[], byte[]> r) {
    JsonNode key = parse(r.key());
    if (r.value() == null) {
      return new ChangeRecord(r.topic(), TOMBSTONE, key, null);
    }
    JsonNode value = parse(r.value());
    JsonNode after = value.get("after");
    return new ChangeRecord(
        r.topic(), value.path("op").asText(), key, after == null || after.isNull() ? null : after);
  }

  /**
   * Returns an expected record, the key and the row written as JSON.
   *
   * @param topic the topic
   * @param op the operation
   * @param key the key as JSON
   * @param after the row as JSON, or null
   * @return the record
   */
  static ChangeRecord expect(String topic, String op, String key, String after) {
    return new ChangeRecord(topic, op, parse(key), after == null ? null : parse(after));
  }

  /**
   * One line for a person: topic, op, key, and the row after the change (before it for a delete);
   * with {@code full}, the whole value as Kafka holds it.
   *
   * @param r the record
   * @param full whether to print the whole value (with {@code source}, {@code transaction}, ...)
   * @return the line
   */
  static String describe(ConsumerRecord<byte[], byte[]> r, boolean full) {
    String key = r.key() == null ? "null" : new String(r.key(), StandardCharsets.UTF_8);
    if (r.value() == null) {
      return String.format("%-24s %-9s key %s  value null", r.topic(), TOMBSTONE, key);
    }
    JsonNode value = parse(r.value());
    String op = value.path("op").asText();
    String head = String.format("%-24s %-9s key %s", r.topic(), op, key);
    if (full) {
      return head + "  value " + value;
    }
    return "d".equals(op)
        ? head + "  before " + value.get("before")
        : head + "  after " + value.get("after");
  }

  private static JsonNode parse(byte[] json) {
    return json == null ? null : parse(new String(json, StandardCharsets.UTF_8));
  }

  private static JsonNode parse(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + json, e);
    }
  }
}
