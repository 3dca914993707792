package io.datum.cdc.store.file;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The on-disk JSON form of a checkpoint, format 1:
 *
 * <pre>{@code
 * {"format":1,"slot":"s","watermark":"0/16B3748","acknowledged_beyond":[
 *   {"tx_end_lsn":"0/16B3800","event_count":5,"acknowledged":[[0,2],[4,4]]}]}
 * }</pre>
 *
 * <p>{@code acknowledged} lists the acknowledged event indexes as ascending, disjoint, non-adjacent
 * inclusive ranges. Reading is strict: anything not exactly of this form is corrupt.
 */
final class CheckpointJson {

  /** The only format version this class writes and reads. */
  static final int FORMAT = 1;

  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_CREATOR_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
          .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
          .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
          .build();

  /** The whole file. */
  @JsonPropertyOrder({"format", "slot", "watermark", "acknowledged_beyond"})
  record FileJson(
      @JsonProperty("format") int format,
      @JsonProperty("slot") String slot,
      @JsonProperty("watermark") String watermark,
      @JsonProperty("acknowledged_beyond") List<TxJson> acknowledgedBeyond) {}

  /** One element of {@code acknowledged_beyond}. */
  @JsonPropertyOrder({"tx_end_lsn", "event_count", "acknowledged"})
  record TxJson(
      @JsonProperty("tx_end_lsn") String txEndLsn,
      @JsonProperty("event_count") int eventCount,
      @JsonProperty("acknowledged") List<int[]> acknowledged) {}

  private CheckpointJson() {}

  /**
   * Encodes a checkpoint as one line of UTF-8 JSON ending in a newline.
   *
   * @param checkpoint the checkpoint
   * @return the file content
   */
  static byte[] encode(CdcCheckpoint checkpoint) {
    List<TxJson> txs = new ArrayList<>();
    for (PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
      txs.add(new TxJson(tx.txEndLsn().toString(), tx.eventCount(), Ranges.of(tx)));
    }
    FileJson file = new FileJson(FORMAT, checkpoint.slot(), checkpoint.watermark().toString(), txs);
    try {
      byte[] json = MAPPER.writeValueAsBytes(file);
      byte[] line = java.util.Arrays.copyOf(json, json.length + 1);
      line[json.length] = '\n';
      return line;
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode checkpoint of slot " + checkpoint.slot(), e);
    }
  }

  /**
   * Decodes a checkpoint file's content.
   *
   * @param bytes the whole file
   * @param slot the slot the file belongs to, from its name
   * @param file the file, for messages
   * @return the checkpoint
   * @throws CdcStoreException naming {@code file} and what is wrong, if the content is not a
   *     well-formed format-1 checkpoint of {@code slot}
   */
  static CdcCheckpoint decode(byte[] bytes, String slot, Path file) {
    if (bytes.length == 0) {
      throw corrupt(file, "the file is empty (0 bytes); it was not written by a completed store");
    }
    JsonNode tree;
    try {
      tree = MAPPER.readTree(bytes);
    } catch (IOException e) {
      throw corrupt(file, "not valid JSON, truncated or damaged: " + describe(e), e);
    }
    if (tree == null || tree.isMissingNode()) {
      throw corrupt(file, "the file holds no JSON value (" + bytes.length + " bytes of blanks)");
    }
    if (!tree.isObject()) {
      throw corrupt(file, "expected a JSON object, found " + tree.getNodeType());
    }
    JsonNode format = tree.get("format");
    if (format == null || !format.isInt()) {
      throw corrupt(file, "no integer \"format\" field (found " + format + ")");
    }
    if (format.intValue() != FORMAT) {
      throw corrupt(
          file,
          "unsupported format " + format.intValue() + "; this version reads format " + FORMAT);
    }
    FileJson json;
    try {
      json = MAPPER.treeToValue(tree, FileJson.class);
    } catch (JacksonException | IllegalArgumentException e) {
      throw corrupt(file, "does not match checkpoint format " + FORMAT + ": " + describe(e), e);
    }
    if (!slot.equals(json.slot())) {
      throw corrupt(
          file,
          "it belongs to slot \"" + json.slot() + "\", but the file is named for \"" + slot + '"');
    }
    PgLsn watermark = lsn(file, "watermark", json.watermark());
    List<PartialTransaction> txs = new ArrayList<>();
    for (int i = 0; i < json.acknowledgedBeyond().size(); i++) {
      txs.add(
          transaction(file, "acknowledged_beyond[" + i + "]", json.acknowledgedBeyond().get(i)));
    }
    try {
      return new CdcCheckpoint(slot, watermark, txs);
    } catch (IllegalArgumentException e) {
      throw corrupt(file, e.getMessage(), e);
    }
  }

  private static PartialTransaction transaction(Path file, String where, TxJson tx) {
    if (tx == null) {
      throw corrupt(file, where + " is null");
    }
    PgLsn end = lsn(file, where + ".tx_end_lsn", tx.txEndLsn());
    if (tx.eventCount() < 1) {
      throw corrupt(file, where + ".event_count is " + tx.eventCount() + ", must be at least 1");
    }
    try {
      return Ranges.toTransaction(end, tx.eventCount(), tx.acknowledged());
    } catch (IllegalArgumentException e) {
      throw corrupt(file, where + ".acknowledged: " + e.getMessage(), e);
    }
  }

  private static PgLsn lsn(Path file, String field, String text) {
    try {
      return PgLsn.parse(text);
    } catch (IllegalArgumentException e) {
      throw corrupt(file, field + ": " + e.getMessage(), e);
    }
  }

  private static String describe(Exception e) {
    if (!(e instanceof JacksonException)) {
      return String.valueOf(e.getMessage());
    }
    JacksonException je = (JacksonException) e;
    String message =
        e instanceof UnrecognizedPropertyException
            ? "unknown field \"" + ((UnrecognizedPropertyException) e).getPropertyName() + '"'
            : String.valueOf(je.getOriginalMessage())
                .replaceAll(" \\((but|class) [^)]*\\)", "") // Jackson's hints about its settings
                .replaceAll("; `[^`]*` enabled", "");
    StringBuilder text = new StringBuilder(message);
    if (je instanceof JsonMappingException && !((JsonMappingException) je).getPath().isEmpty()) {
      text.append(" at ").append(path((JsonMappingException) je));
    } else {
      JsonLocation at = je.getLocation();
      if (at != null && at.getLineNr() > 0) {
        text.append(" at line ")
            .append(at.getLineNr())
            .append(", column ")
            .append(at.getColumnNr());
      }
    }
    return text.toString();
  }

  private static String path(JsonMappingException e) {
    StringBuilder path = new StringBuilder();
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getFieldName() != null) {
        path.append(path.length() == 0 ? "" : ".").append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        path.append('[').append(ref.getIndex()).append(']');
      }
    }
    return path.toString();
  }

  private static CdcStoreException corrupt(Path file, String what) {
    return corrupt(file, what, null);
  }

  private static CdcStoreException corrupt(Path file, String what, Throwable cause) {
    return new CdcStoreException("corrupt checkpoint file " + file + ": " + what, cause);
  }
}
