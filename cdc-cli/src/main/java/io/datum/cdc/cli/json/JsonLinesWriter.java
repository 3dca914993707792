package io.datum.cdc.cli.json;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.SnapshotInfo;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * Writes change events in the JSON-lines format 1 of docs/json-lines.md: one JSON object per event,
 * then {@code '\n'}, with the fields in the documented order and the documented value mapping.
 *
 * <p>Row changes: {@code op, slot, schema, table, xid, commit_lsn, tx_end_lsn, event_index,
 * event_count, lsn, commit_time, [origin], [redelivered], key, before, after, unchanged_toast,
 * [undecoded]}; {@code undecoded} is present only when a column value of the event is given raw
 * (the decode-error policy RAW: {@link Row#undecodedColumns()}); a read row ends with {@code
 * snapshot}. Truncate: {@code op, slot, xid, commit_lsn, tx_end_lsn, event_index, event_count, lsn,
 * commit_time, [origin], [redelivered], tables, cascade, restart_identity, [snapshot]}; {@code
 * snapshot} only on a snapshot's reset of a table without a key ({@link
 * TruncateEvent#isSnapshotReset()}). Message: the same header, then {@code prefix, content,
 * transactional}. {@code origin} is present only when the transaction has one; {@code redelivered}
 * (always {@code true}) only when {@link TransactionInfo#redelivered()} is: the source knows it
 * delivered the transaction before (after a reconnect, or partly acknowledged before a restart).
 * The position fields ({@code slot} to {@code event_count}) come from {@link ChangeEvent#offset()},
 * the one to acknowledge; {@code lsn} is the event's own WAL position ({@link ChangeEvent#lsn()});
 * {@code commit_time} and {@code origin} from {@link ChangeEvent#transaction()}.
 *
 * <p>Unchanged TOAST columns of {@code after} are left out of it and listed in {@code
 * unchanged_toast}, except when {@code before} carries the column's value (REPLICA IDENTITY FULL,
 * or a key column in a key-only old row): as the value did not change, it is then written into
 * {@code after} (and into {@code key}) and not listed. Unchanged TOAST columns of any other row are
 * left out.
 *
 * <p>Output is UTF-8 (an {@link OutputStream} target) without escaping non-ASCII characters;
 * control characters, quotes and backslashes are escaped. {@link #write} buffers: call {@link
 * #flush} to push the lines to the target. One generator serves the writer's whole life.
 *
 * <p>Value mapping, and the choices the format leaves open: see the package documentation.
 *
 * <p>Not thread-safe. If writing an event or flushing fails, the writer is broken (a line may be
 * half-written) and every later call but {@link #close} throws {@link IllegalStateException}.
 */
public final class JsonLinesWriter implements Flushable, Closeable {

  private static final JsonFactory FACTORY =
      new JsonFactoryBuilder()
          .rootValueSeparator((SerializableString) null)
          .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
          .enable(StreamWriteFeature.USE_FAST_DOUBLE_WRITER)
          .disable(StreamWriteFeature.AUTO_CLOSE_TARGET)
          .disable(StreamWriteFeature.AUTO_CLOSE_CONTENT)
          .build();

  private static final SerializedString OP = new SerializedString("op");
  private static final SerializedString SLOT = new SerializedString("slot");
  private static final SerializedString SCHEMA = new SerializedString("schema");
  private static final SerializedString TABLE = new SerializedString("table");
  private static final SerializedString XID = new SerializedString("xid");
  private static final SerializedString COMMIT_LSN = new SerializedString("commit_lsn");
  private static final SerializedString TX_END_LSN = new SerializedString("tx_end_lsn");
  private static final SerializedString EVENT_INDEX = new SerializedString("event_index");
  private static final SerializedString EVENT_COUNT = new SerializedString("event_count");
  private static final SerializedString LSN = new SerializedString("lsn");
  private static final SerializedString COMMIT_TIME = new SerializedString("commit_time");
  private static final SerializedString ORIGIN = new SerializedString("origin");
  private static final SerializedString REDELIVERED = new SerializedString("redelivered");
  private static final SerializedString KEY = new SerializedString("key");
  private static final SerializedString BEFORE = new SerializedString("before");
  private static final SerializedString AFTER = new SerializedString("after");
  private static final SerializedString UNCHANGED_TOAST = new SerializedString("unchanged_toast");
  private static final SerializedString UNDECODED = new SerializedString("undecoded");
  private static final SerializedString TABLES = new SerializedString("tables");
  private static final SerializedString CASCADE = new SerializedString("cascade");
  private static final SerializedString RESTART_IDENTITY = new SerializedString("restart_identity");
  private static final SerializedString PREFIX = new SerializedString("prefix");
  private static final SerializedString CONTENT = new SerializedString("content");
  private static final SerializedString TRANSACTIONAL = new SerializedString("transactional");
  private static final SerializedString SNAPSHOT = new SerializedString("snapshot");
  private static final SerializedString ID = new SerializedString("id");
  private static final SerializedString CHUNK = new SerializedString("chunk");
  private static final SerializedString CONSISTENT_WITH = new SerializedString("consistent_with");
  private static final SerializedString LAST_OF_TABLE = new SerializedString("last_of_table");

  private final JsonGenerator generator;
  private final JsonValueWriter values;
  private boolean broken;

  // One-entry caches of what consecutive lines share, serialized once: the slot, the table, and a
  // transaction's commit_lsn, tx_end_lsn and commit_time (every event of a transaction repeats
  // them)
  private String slot;
  private SerializedString slotText;
  private TableId table;
  private SerializedString schemaText;
  private SerializedString tableText;
  private PgLsn commitLsn;
  private SerializedString commitLsnText;
  private PgLsn txEndLsn;
  private SerializedString txEndLsnText;
  private Instant commitTime;
  private SerializedString commitTimeText;

  /**
   * Writes UTF-8 to a stream. The stream is not closed by {@link #close}: the caller owns it.
   *
   * @param out the target, for example {@code System.out}
   */
  public JsonLinesWriter(OutputStream out) {
    this(open(Objects.requireNonNull(out, "out")));
  }

  /**
   * Writes characters to a writer. The writer is not closed by {@link #close}: the caller owns it.
   *
   * @param out the target
   */
  public JsonLinesWriter(Writer out) {
    this(open(Objects.requireNonNull(out, "out")));
  }

  private JsonLinesWriter(JsonGenerator generator) {
    this.generator = generator;
    this.values = new JsonValueWriter(generator);
  }

  private static JsonGenerator open(OutputStream out) {
    try {
      return FACTORY.createGenerator(out, JsonEncoding.UTF8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonGenerator open(Writer out) {
    try {
      return FACTORY.createGenerator(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Writes one event as one line: a JSON object and {@code '\n'}, buffered until {@link #flush}.
   *
   * @param event the event, not null
   * @throws UncheckedIOException if the target fails; the writer is then broken
   * @throws IllegalStateException if the writer is broken or closed
   */
  public void write(ChangeEvent event) {
    write(event, event.transaction().redelivered());
  }

  /**
   * Writes one event as one line, like {@link #write(ChangeEvent)}, with the {@code redelivered}
   * field decided by the caller ({@code pgcdc stream}: this process printed the event before).
   *
   * @param event the event, not null
   * @param redelivered whether to write {@code "redelivered":true}
   * @throws UncheckedIOException if the target fails; the writer is then broken
   * @throws IllegalStateException if the writer is broken or closed
   */
  public void write(ChangeEvent event, boolean redelivered) {
    Objects.requireNonNull(event, "event");
    ensureUsable();
    try {
      generator.writeStartObject();
      generator.writeFieldName(OP);
      generator.writeString(event.kind().jsonName());
      if (event instanceof RowChange change) {
        writeHeader(event, change.table(), redelivered);
        writeRowChange(change);
      } else if (event instanceof TruncateEvent truncate) {
        writeHeader(event, null, redelivered);
        writeTruncate(truncate);
      } else if (event instanceof MessageEvent message) {
        writeHeader(event, null, redelivered);
        writeMessage(message);
      } else {
        throw new IllegalArgumentException("unknown event type " + event.getClass().getName());
      }
      generator.writeEndObject();
      generator.writeRaw('\n');
    } catch (IOException e) {
      broken = true;
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      broken = true;
      throw e;
    }
  }

  /**
   * Pushes the buffered lines to the target and flushes it.
   *
   * @throws UncheckedIOException if the target fails; the writer is then broken
   * @throws IllegalStateException if the writer is broken or closed
   */
  @Override
  public void flush() {
    ensureUsable();
    try {
      generator.flush();
    } catch (IOException e) {
      broken = true;
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Flushes the buffered lines and releases the generator; the target stays open. Idempotent.
   *
   * @throws UncheckedIOException if the target fails
   */
  @Override
  public void close() {
    if (generator.isClosed()) {
      return;
    }
    try {
      generator.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void ensureUsable() {
    if (broken) {
      throw new IllegalStateException("JSON-lines writer failed earlier; its output is incomplete");
    }
    if (generator.isClosed()) {
      throw new IllegalStateException("JSON-lines writer is closed");
    }
  }

  private void writeHeader(ChangeEvent event, TableId table, boolean redelivered)
      throws IOException {
    CdcOffset offset = event.offset();
    generator.writeFieldName(SLOT);
    if (!offset.slot().equals(slot)) {
      slot = offset.slot();
      slotText = new SerializedString(slot);
    }
    generator.writeString(slotText);
    if (table != null) {
      if (!table.equals(this.table)) {
        this.table = table;
        schemaText = new SerializedString(table.schema());
        tableText = new SerializedString(table.table());
      }
      generator.writeFieldName(SCHEMA);
      generator.writeString(schemaText);
      generator.writeFieldName(TABLE);
      generator.writeString(tableText);
    }
    generator.writeFieldName(XID);
    generator.writeNumber(offset.xid());
    if (!offset.commitLsn().equals(commitLsn)) {
      commitLsn = offset.commitLsn();
      commitLsnText = new SerializedString(commitLsn.toString());
    }
    generator.writeFieldName(COMMIT_LSN);
    generator.writeString(commitLsnText);
    if (!offset.txEndLsn().equals(txEndLsn)) {
      txEndLsn = offset.txEndLsn();
      txEndLsnText = new SerializedString(txEndLsn.toString());
    }
    generator.writeFieldName(TX_END_LSN);
    generator.writeString(txEndLsnText);
    generator.writeFieldName(EVENT_INDEX);
    generator.writeNumber(offset.eventIndex());
    generator.writeFieldName(EVENT_COUNT);
    generator.writeNumber(offset.eventCount());
    generator.writeFieldName(LSN);
    generator.writeString(event.lsn().toString());
    TransactionInfo transaction = event.transaction();
    if (!transaction.commitTime().equals(commitTime)) {
      commitTime = transaction.commitTime();
      commitTimeText = new SerializedString(values.instantText(commitTime));
    }
    generator.writeFieldName(COMMIT_TIME);
    generator.writeString(commitTimeText);
    if (transaction.origin() != null) {
      generator.writeFieldName(ORIGIN);
      generator.writeString(transaction.origin());
    }
    if (redelivered) {
      generator.writeFieldName(REDELIVERED);
      generator.writeBoolean(true);
    }
  }

  private void writeRowChange(RowChange change) throws IOException {
    Row before;
    Row after;
    if (change instanceof InsertEvent insert) {
      before = null;
      after = insert.after();
    } else if (change instanceof ReadEvent read) {
      before = null;
      after = read.after();
    } else if (change instanceof UpdateEvent update) {
      before = update.before();
      after = update.after();
    } else {
      before = ((DeleteEvent) change).before();
      after = null;
    }
    generator.writeFieldName(KEY);
    writeRow(change.key(), before);
    generator.writeFieldName(BEFORE);
    writeRow(before, null);
    generator.writeFieldName(AFTER);
    writeRow(after, before);
    generator.writeFieldName(UNCHANGED_TOAST);
    generator.writeStartArray();
    if (after != null) {
      for (int i = 0; i < after.size(); i++) {
        if (after.isUnchangedToast(i) && fillIndex(before, after.column(i).name()) < 0) {
          generator.writeString(after.column(i).name());
        }
      }
    }
    generator.writeEndArray();
    writeUndecoded(change.key(), before, after);
    if (change instanceof ReadEvent read) {
      writeSnapshot(read.snapshot());
    }
  }

  /** Writes {@code "snapshot"}: the snapshot of a read row or of a reset. */
  private void writeSnapshot(SnapshotInfo snapshot) throws IOException {
    generator.writeFieldName(SNAPSHOT);
    generator.writeStartObject();
    generator.writeFieldName(ID);
    generator.writeString(snapshot.id());
    generator.writeFieldName(CHUNK);
    generator.writeNumber(snapshot.chunk());
    generator.writeFieldName(CONSISTENT_WITH);
    generator.writeString(snapshot.consistentWith().toString());
    if (snapshot.lastOfTable()) {
      generator.writeFieldName(LAST_OF_TABLE);
      generator.writeBoolean(true);
    }
    generator.writeEndObject();
  }

  /**
   * Writes {@code "undecoded"}, the names of the columns of {@code key}, {@code before} or {@code
   * after} given raw (the decode-error policy RAW), each once, if there are any.
   */
  private void writeUndecoded(Row key, Row before, Row after) throws IOException {
    if (!hasUndecoded(key) && !hasUndecoded(before) && !hasUndecoded(after)) {
      return;
    }
    Set<String> names = new LinkedHashSet<>();
    for (Row row : new Row[] {key, before, after}) {
      if (row != null) {
        names.addAll(row.undecodedColumns());
      }
    }
    generator.writeFieldName(UNDECODED);
    generator.writeStartArray();
    for (String name : names) {
      generator.writeString(name);
    }
    generator.writeEndArray();
  }

  private static boolean hasUndecoded(Row row) {
    return row != null && row.hasUndecoded();
  }

  /**
   * Writes a row as an object, or null. An unchanged TOAST column is written with the value of the
   * same-named column of {@code fill} if that row has one, else left out.
   */
  private void writeRow(Row row, Row fill) throws IOException {
    if (row == null) {
      generator.writeNull();
      return;
    }
    generator.writeStartObject();
    for (int i = 0; i < row.size(); i++) {
      Row source = row;
      int index = i;
      if (row.isUnchangedToast(i)) {
        source = fill;
        index = fillIndex(fill, row.column(i).name());
        if (index < 0) {
          continue;
        }
      }
      generator.writeFieldName(row.column(i).name());
      // a raw value is the text PostgreSQL sent (a string, never a bare number) or its bytes
      values.write(
          source.get(index),
          !source.isUndecoded(index) && JsonValueWriter.isNumeric(source.column(index).typeOid()));
    }
    generator.writeEndObject();
  }

  /** Returns the index of a column in {@code fill} that carries a value, or -1. */
  private static int fillIndex(Row fill, String column) {
    if (fill == null) {
      return -1;
    }
    int index = fill.indexOf(column);
    return index >= 0 && !fill.isUnchangedToast(index) ? index : -1;
  }

  private void writeTruncate(TruncateEvent truncate) throws IOException {
    generator.writeFieldName(TABLES);
    generator.writeStartArray();
    for (TableId table : truncate.tables()) {
      generator.writeStartObject();
      generator.writeFieldName(SCHEMA);
      generator.writeString(table.schema());
      generator.writeFieldName(TABLE);
      generator.writeString(table.table());
      generator.writeEndObject();
    }
    generator.writeEndArray();
    generator.writeFieldName(CASCADE);
    generator.writeBoolean(truncate.cascade());
    generator.writeFieldName(RESTART_IDENTITY);
    generator.writeBoolean(truncate.restartIdentity());
    if (truncate.isSnapshotReset()) {
      writeSnapshot(truncate.snapshot());
    }
  }

  private void writeMessage(MessageEvent message) throws IOException {
    generator.writeFieldName(PREFIX);
    generator.writeString(message.prefix());
    generator.writeFieldName(CONTENT);
    generator.writeBinary(message.content());
    generator.writeFieldName(TRANSACTIONAL);
    generator.writeBoolean(message.transactional());
  }
}
