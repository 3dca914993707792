package io.datum.cdc.kafka.connect;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.connect.data.ConnectSchema;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Headers;

/** A {@link RecordSink} that keeps the records it is given, checking each against its schemas. */
final class Collected implements RecordSink {

  /**
   * One record's parts.
   *
   * @param topic the topic
   * @param keySchema the key schema or null
   * @param key the key or null
   * @param valueSchema the value schema or null
   * @param value the value or null
   * @param timestampMillis the timestamp
   * @param headers the headers or null
   */
  record Part(
      String topic,
      Schema keySchema,
      Object key,
      Schema valueSchema,
      Object value,
      long timestampMillis,
      Headers headers) {}

  final List<Part> parts = new ArrayList<>();

  @Override
  public void accept(
      String topic,
      Schema keySchema,
      Object key,
      Schema valueSchema,
      Object value,
      long timestampMillis,
      Headers headers) {
    if (keySchema != null) {
      ConnectSchema.validateValue(keySchema, key);
    }
    if (valueSchema != null) {
      ConnectSchema.validateValue(valueSchema, value);
    }
    parts.add(new Part(topic, keySchema, key, valueSchema, value, timestampMillis, headers));
  }

  /** Returns the only record kept, failing if there is not exactly one. */
  Part only() {
    if (parts.size() != 1) {
      throw new AssertionError("expected 1 record, got " + parts);
    }
    return parts.get(0);
  }
}
