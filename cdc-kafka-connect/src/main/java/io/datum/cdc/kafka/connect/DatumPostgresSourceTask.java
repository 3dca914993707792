package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ReadEvent;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connector's task: streams the slot with datum-cdc's {@link PgCdcSource} and hands each change
 * to Connect as a record.
 *
 * <p><b>Positions.</b> Each record's offset is the position after it (see {@link Offsets}): Connect
 * commits, per source partition, the offset of the newest record such that it and all records
 * polled before it were written, so the committed offset is always a position whose every earlier
 * change is in Kafka. A restarted task resumes there, wherever it runs.
 *
 * <p><b>The slot.</b> {@code commitRecord} acknowledges the record's event to the library, whose
 * coordinator computes the contiguous acknowledged prefix (records of different topic-partitions
 * are acknowledged out of order; the prefix never passes one still in flight). The slot's {@code
 * confirmed_flush_lsn} moves only to a prefix Connect has committed: at each {@link #commit()} the
 * limit becomes the prefix seen at the previous {@code commit()}, which the offsets written since
 * include (the worker takes the offsets to write after that call returned, and its own
 * acknowledgement of a record precedes {@code commitRecord}), capped at the watermark in the offset
 * of the newest record of Connect's acknowledged prefix (the library's position can pass every
 * record: keepalives, unpublished tables, events that make no record). So the slot lags Connect's
 * offsets by one offset commit, and never passes them.
 *
 * <p><b>Exactly once.</b> With {@code transaction.boundary=connector}, the task asks Connect to
 * commit the Kafka transaction after the last record of the last PostgreSQL transaction that ends
 * in each poll's batch (several small PostgreSQL transactions share a Kafka transaction; none is
 * split, except by {@code transaction.max.records} inside very large ones); offsets are written in
 * the same Kafka transaction, so a {@code read_committed} consumer sees each change once and each
 * PostgreSQL transaction whole.
 */
public final class DatumPostgresSourceTask extends SourceTask {

  private static final Logger LOG = LoggerFactory.getLogger(DatumPostgresSourceTask.class);

  private DatumConnectorConfig config;
  private volatile PgCdcSource source;

  /** The library's source's termination; null until it started. The poll thread. */
  private CompletableFuture<Void> running;

  private CdcCheckpointHandle handle;
  private ConnectCheckpointStore store;
  private ArrayBlockingQueue<DatumRecord> queue;
  private ChangeRecords records;
  private KafkaTransactions transactions;
  private Map<String, String> partition;
  private String publication;
  private int maxBatch;
  private long pollMillis;

  private volatile boolean stopping;
  private final java.util.concurrent.CountDownLatch stopSignal =
      new java.util.concurrent.CountDownLatch(1);

  // starting: a transient failure at start is retried from poll
  private int maxStartAttempts;
  private long startBackoffMillis;
  private long maxStartBackoffMillis;
  private int startAttempts;
  private long nextStartNanos;
  private boolean doneLogged;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();

  /** The slot may be confirmed up to this; read by the replication thread. */
  private volatile PgLsn flushLimit = PgLsn.ZERO;

  /** The acknowledged prefix seen at the last {@link #commit()}; the next one's limit. */
  private volatile PgLsn pendingLimit = PgLsn.ZERO;

  /**
   * The records polled and not yet known acknowledged, in the order poll returned them (Connect's
   * submission order); guarded by itself. Connect writes the offset of the newest record of its
   * acknowledged prefix, so the watermark of that record bounds what the slot may be confirmed to.
   */
  private final ArrayDeque<DatumRecord> inFlight = new ArrayDeque<>();

  /** The watermark of the newest record of Connect's acknowledged prefix; guarded by inFlight. */
  private PgLsn acknowledgedUpTo = PgLsn.ZERO;

  // heartbeats (the poll thread)
  private long heartbeatMillis;
  private String heartbeatTopic;
  private Schema heartbeatKeySchema;
  private Schema heartbeatValueSchema;
  private long lastHeartbeat;

  /** The upper bound of the position of the newest record polled; the poll thread. */
  private PgLsn polledUpTo = PgLsn.ZERO;

  // the handler thread's state: the position after the newest event converted
  private PgLsn watermark = PgLsn.ZERO;
  private Map<String, Object> lastOffset;
  private ClusterIdentity lastCluster;

  /** The {@code snapshot} field's text of the newest stored progress; both threads. */
  private final ProgressText progressText = new ProgressText();

  /** The offset of the newest record polled; the poll thread. */
  private Map<String, ?> polledOffset;

  private final PartsSink sink = new PartsSink();

  /** Creates a task; Connect calls {@link #start}. */
  public DatumPostgresSourceTask() {}

  @Override
  public String version() {
    return DatumPostgresConnector.VERSION;
  }

  @Override
  public void start(Map<String, String> props) {
    config = new DatumConnectorConfig(props);
    partition = Offsets.partition(config.topicPrefix(), config.database(), config.slot());
    publication = config.publication();
    maxBatch = config.getInt(DatumConnectorConfig.MAX_BATCH_SIZE);
    pollMillis = config.getLong(DatumConnectorConfig.POLL_INTERVAL_MS);
    queue = new ArrayBlockingQueue<>(config.getInt(DatumConnectorConfig.MAX_QUEUE_SIZE));
    TransactionContext tx = context.transactionContext();
    transactions =
        tx == null
            ? null
            : new KafkaTransactions(
                tx, config.getInt(DatumConnectorConfig.TRANSACTION_MAX_RECORDS));
    String where = "slot " + config.slot() + " (Connect source partition " + partition + ")";
    Map<String, Object> stored = context.offsetStorageReader().offset(partition);
    CdcCheckpoint loaded = stored == null ? null : Offsets.checkpoint(config.slot(), stored, where);
    store = new ConnectCheckpointStore(config.slot(), loaded, "Kafka Connect offsets of " + where);
    if (loaded != null) {
      watermark = loaded.watermark();
      flushLimit = loaded.watermark();
      pendingLimit = loaded.watermark();
      acknowledgedUpTo = loaded.watermark();
      polledUpTo = upperBound(stored);
      polledOffset = stored;
      lastOffset = new java.util.HashMap<>(stored);
      LOG.info("{}: resuming from Connect's offset {}", where, stored);
    } else {
      lastOffset = Offsets.offset(PgLsn.ZERO, null, 0, 0, null, publication, null);
      LOG.info("{}: no offset in Connect's offset storage, starting afresh", where);
    }
    heartbeatMillis = config.getLong(DatumConnectorConfig.HEARTBEAT_INTERVAL_MS);
    heartbeatTopic =
        config.getString(DatumConnectorConfig.HEARTBEAT_TOPIC_PREFIX) + "." + config.topicPrefix();
    heartbeatKeySchema =
        SchemaBuilder.struct()
            .name("io.datum.cdc.connector.postgresql.ServerNameKey")
            .field("serverName", Schema.STRING_SCHEMA)
            .build();
    heartbeatValueSchema =
        SchemaBuilder.struct()
            .name("io.datum.cdc.connector.common.Heartbeat")
            .field("ts_ms", Schema.INT64_SCHEMA)
            .field("lsn", Schema.INT64_SCHEMA)
            .build();
    lastHeartbeat = System.currentTimeMillis();
    records = new ChangeRecords(config.recordSettings());
    maxStartAttempts = config.getInt(DatumConnectorConfig.RECONNECT_ATTEMPTS);
    startBackoffMillis = config.getLong(DatumConnectorConfig.RECONNECT_BACKOFF_MS);
    maxStartBackoffMillis = config.getLong(DatumConnectorConfig.RECONNECT_BACKOFF_MAX_MS);
    CdcException transientFailure = tryStart();
    if (transientFailure != null) {
      LOG.warn(
          "slot {}: cannot start yet ({}); the task retries in {} ms and keeps retrying from"
              + " poll (reconnect.backoff.initial.ms, reconnect.backoff.max.ms,"
              + " reconnect.max.attempts)",
          config.slot(),
          transientFailure.getMessage(),
          TimeUnit.NANOSECONDS.toMillis(nextStartNanos - System.nanoTime()));
    }
  }

  /**
   * Starts the library's source once. A failure retrying cannot heal ({@link PgErrors#isTransient}:
   * authentication, privileges, a missing database, slot or publication, configuration, server
   * limits) fails the task at once, its message naming the remedy in this connector's options; a
   * transient one (the server unreachable, restarting, too many connections, the slot still held)
   * schedules the next attempt with exponential backoff and jitter, up to {@code
   * reconnect.max.attempts} attempts.
   *
   * @return null once started; the transient failure if the next attempt is scheduled
   * @throws ConnectException if the failure is permanent or the attempts are used up
   */
  private CdcException tryStart() {
    PgCdcSource s = null;
    try {
      s =
          config
              .sourceBuilder(publicationExists())
              .checkpointStore(store)
              .acknowledgementDurability(AcknowledgementDurability.TRANSACTION)
              .confirmedFlushLimit(() -> flushLimit)
              .build();
      source = s;
      handle = s.checkpoints();
      CompletableFuture<Void> started = s.start(this::handle);
      started.whenComplete(
          (ok, e) -> {
            if (e != null) {
              failure.compareAndSet(null, e);
            }
          });
      running = started;
      if (stopping) {
        s.stop(); // stop() ran while this start was under way: it may have missed the source
      }
      return null;
    } catch (CdcException e) {
      if (s != null) {
        try {
          s.close();
        } catch (RuntimeException closing) {
          e.addSuppressed(closing);
        }
      }
      source = null;
      startAttempts++;
      if (!PgErrors.isTransient(e)) {
        throw new ConnectException(
            "datum-cdc's source of slot "
                + config.slot()
                + " cannot start, and retrying cannot fix it: "
                + e.getMessage()
                + hintFor(e),
            e);
      }
      if (maxStartAttempts >= 0 && startAttempts > maxStartAttempts) {
        throw new ConnectException(
            "datum-cdc's source of slot "
                + config.slot()
                + " cannot start after "
                + startAttempts
                + " attempts (reconnect.max.attempts="
                + maxStartAttempts
                + "): "
                + e.getMessage()
                + hintFor(e),
            e);
      }
      long jittered =
          startBackoffMillis / 2
              + java.util.concurrent.ThreadLocalRandom.current()
                  .nextLong(startBackoffMillis / 2 + 1);
      nextStartNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(jittered);
      startBackoffMillis = Math.min(startBackoffMillis * 2, maxStartBackoffMillis);
      return e;
    }
  }

  /** Whether the publication exists (it decides what the builder may create). */
  private boolean publicationExists() {
    try (Connection c =
            DriverManager.getConnection(
                config.jdbcUrl(), config.jdbcProperties("datum-cdc " + config.slot()));
        java.sql.PreparedStatement st =
            c.prepareStatement("SELECT 1 FROM pg_publication WHERE pubname = ?")) {
      st.setString(1, publication);
      try (java.sql.ResultSet rs = st.executeQuery()) {
        return rs.next();
      }
    } catch (SQLException e) {
      throw PgErrors.map(
          "cannot look up publication "
              + publication
              + " at "
              + PgErrors.redact(config.jdbcUrl())
              + " as "
              + config.getString(DatumConnectorConfig.USER),
          e);
    }
  }

  /**
   * Waits, up to the poll interval, for the next start attempt and makes it.
   *
   * @return true once started; false if it is not time yet or the task is stopping
   * @throws RetriableException if the attempt failed and another follows: Connect logs it and polls
   *     again
   */
  private boolean startWhenDue() throws InterruptedException {
    long wait = nextStartNanos - System.nanoTime();
    if (wait > 0) {
      if (stopSignal.await(
              Math.min(wait, TimeUnit.MILLISECONDS.toNanos(pollMillis)), TimeUnit.NANOSECONDS)
          || nextStartNanos - System.nanoTime() > 0) {
        return false;
      }
    }
    if (stopping) {
      return false;
    }
    CdcException transientFailure = tryStart();
    if (transientFailure == null) {
      LOG.info("slot {}: started after {} attempts", config.slot(), startAttempts + 1);
      return true;
    }
    throw new RetriableException(
        "datum-cdc's source of slot "
            + config.slot()
            + " cannot start yet (attempt "
            + startAttempts
            + "): "
            + transientFailure.getMessage()
            + "; retrying in "
            + TimeUnit.NANOSECONDS.toMillis(nextStartNanos - System.nanoTime())
            + " ms",
        transientFailure);
  }

  /**
   * The connector's options and REST calls for what the library's message names in its own terms
   * (builder methods, pgcdc flags).
   */
  private String hintFor(Throwable failed) {
    if (PgErrors.isAuthenticationFailure(failed)) {
      return ". In this connector: "
          + DatumConnectorConfig.USER
          + " names the role and "
          + DatumConnectorConfig.PASSWORD
          + " its password (a config provider, such as ${file:...}, keeps it out of the"
          + " connector's configuration)";
    }
    for (Throwable t = failed; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && "3D000".equals(sql.getSQLState())) {
        return ". In this connector: " + DatumConnectorConfig.DBNAME + " names the database";
      }
      if (t instanceof io.datum.cdc.CdcReplicationException e) {
        return connectorHint(e.reason());
      }
      if (t == t.getCause()) {
        break;
      }
    }
    return "";
  }

  private String connectorHint(io.datum.cdc.CdcReplicationException.Reason reason) {
    return switch (reason) {
      case SLOT_INVALIDATED ->
          ". In this connector: the changes the slot no longer holds are lost to it; to start"
              + " afresh with a new slot and snapshot, stop the connector, drop the slot"
              + " (SELECT pg_drop_replication_slot('"
              + config.slot()
              + "')), reset its offsets (DELETE /connectors/<name>/offsets) and resume it with"
              + " snapshot.mode=initial";
      case PUBLICATION_MISSING ->
          ". In this connector: "
              + DatumConnectorConfig.PUBLICATION_AUTOCREATE_MODE
              + "=all_tables or filtered (with "
              + DatumConnectorConfig.TABLE_INCLUDE_LIST
              + ") creates it";
      case PERMISSION_DENIED ->
          ". In this connector: "
              + DatumConnectorConfig.USER
              + " names the role; it needs the REPLICATION attribute and SELECT on the published"
              + " tables";
      case SLOT_MISSING ->
          config.getBoolean(DatumConnectorConfig.SLOT_CREATE)
              ? slotAheadHint()
              : ". In this connector: " + DatumConnectorConfig.SLOT_CREATE + "=true creates it";
      case SLOT_AHEAD -> slotAheadHint();
      case CLUSTER_MISMATCH, TIMELINE_DIVERGED ->
          ". In this connector: " + DatumConnectorConfig.ALLOW_CLUSTER_CHANGE + "=true accepts it";
      case PUBLICATION_CHANGED ->
          ". In this connector: "
              + DatumConnectorConfig.ALLOW_PUBLICATION_CHANGE
              + "=true accepts it";
      case SLOT_ACTIVE ->
          ". In this connector: "
              + DatumConnectorConfig.SLOT_WAIT_MS
              + " is how long a starting task waits for the slot";
      default -> "";
    };
  }

  private static String slotAheadHint() {
    return ". In this connector: "
        + DatumConnectorConfig.SLOT_TRUST_POSITION
        + "=true accepts the slot's position (losing the changes in between); resetting the"
        + " connector's offsets (stop it, then DELETE /connectors/<name>/offsets) starts it"
        + " afresh (docs/kafka-connect.md, \"Positions and the slot\")";
  }

  /** The library's handler: converts an event to records and queues them; the handler thread. */
  private void handle(ChangeEvent event, CdcCheckpointHandle checkpoints)
      throws InterruptedException {
    if (stopping) {
      return; // never queue after a stop began: a later record would claim this event written
    }
    sink.reset();
    int n = records.convert(event, sink);
    CdcOffset position = event.offset();
    Map<String, Object> before = lastOffset;
    Map<String, Object> after = positionAfter(event);
    if (n == 0) {
      // an event that makes no record (a message while messages go nowhere): acknowledged at
      // once; its position is carried by the next record
      lastOffset = after;
      checkpoints.acknowledge(position);
      return;
    }
    AtomicInteger remaining = n > 1 ? new AtomicInteger(n) : null;
    boolean endsTx = position.isLastInTransaction();
    for (int i = 0; i < n; i++) {
      boolean last = i == n - 1;
      DatumRecord r =
          new DatumRecord(
              partition,
              last ? after : before,
              sink.topics[i],
              sink.keySchemas[i],
              sink.keys[i],
              sink.valueSchemas[i],
              sink.values[i],
              sink.timestamps[i],
              sink.headers[i],
              position,
              remaining,
              last && endsTx);
      while (!queue.offer(r, 100, TimeUnit.MILLISECONDS)) {
        if (stopping) {
          return;
        }
      }
    }
    lastOffset = after;
  }

  /** The offset after an event: the position a task resumes from once it is written. */
  private Map<String, Object> positionAfter(ChangeEvent event) {
    CdcOffset o = event.offset();
    PgLsn txEnd = null;
    if (!(event instanceof ReadEvent)) {
      if (o.isLastInTransaction()) {
        watermark = o.txEndLsn();
      } else {
        txEnd = o.txEndLsn();
      }
    } else if (lastOffset.containsKey(Offsets.TX_END)) {
      // a read row between the events of a transaction cannot happen: chunks are read between
      // transactions; keep the last position as it was
      return lastOffset;
    }
    return Offsets.offset(
        watermark,
        txEnd,
        o.eventCount(),
        o.eventIndex() + 1,
        cluster(),
        publication,
        snapshotText());
  }

  private ClusterIdentity cluster() {
    ClusterIdentity c = source.cluster();
    if (c != null && !c.equals(lastCluster)) {
      lastCluster = c;
    }
    return lastCluster;
  }

  private String snapshotText() {
    return progressText.of(store.latest());
  }

  /**
   * The {@code snapshot} field of offsets: the snapshot progress the library stored last, encoded
   * once per change of it. Shared by the handler and poll threads: each text is published with the
   * progress it encodes, so both threads see the same String for the same progress.
   */
  private final class ProgressText {
    private volatile Encoded last = new Encoded(SnapshotProgress.NONE, null);

    String of(CdcCheckpoint latest) {
      SnapshotProgress p = latest == null ? SnapshotProgress.NONE : latest.snapshot();
      Encoded e = last;
      if (e.progress != p) {
        e =
            new Encoded(
                p,
                p.equals(SnapshotProgress.NONE) ? null : Offsets.encodeSnapshot(config.slot(), p));
        last = e;
      }
      return e.text;
    }
  }

  private record Encoded(SnapshotProgress progress, String text) {}

  private static PgLsn upperBound(Map<String, ?> offset) {
    Object txEnd = offset.get(Offsets.TX_END);
    Object lsn = txEnd != null ? txEnd : offset.get(Offsets.LSN);
    return lsn instanceof Number n ? PgLsn.of(n.longValue()) : PgLsn.ZERO;
  }

  @Override
  public List<SourceRecord> poll() throws InterruptedException {
    if (running == null && !startWhenDue()) {
      return null; // not started yet: a transient failure at start, the next attempt due later
    }
    Throwable failed = failure.get();
    if (failed != null && queue.isEmpty()) {
      throw new ConnectException(
          "datum-cdc's source of slot "
              + config.slot()
              + " failed: "
              + failed.getMessage()
              + hintFor(failed),
          failed);
    }
    DatumRecord first = queue.poll(pollMillis, TimeUnit.MILLISECONDS);
    if (first == null) {
      if (running.isDone() && failure.get() == null && !stopping && !doneLogged) {
        doneLogged = true; // snapshot.mode=initial_only: every row is in Kafka
        LOG.info(
            "slot {}: the initial snapshot is complete and snapshot.mode=initial_only streams"
                + " nothing after it; stop or delete the connector",
            config.slot());
      }
      return heartbeat();
    }
    List<DatumRecord> batch = new ArrayList<>(Math.min(maxBatch, queue.size() + 1));
    batch.add(first);
    queue.drainTo(batch, maxBatch - 1);
    withProgressAtPoll(batch);
    if (transactions != null) {
      transactions.define(batch);
    }
    synchronized (inFlight) {
      acknowledgedPrefix(); // drops what Connect acknowledged: holds only records in flight
      inFlight.addAll(batch);
    }
    polledOffset = batch.get(batch.size() - 1).sourceOffset();
    polledUpTo = upperBound(polledOffset);
    return new ArrayList<>(batch);
  }

  /**
   * Gives every record of a batch the snapshot progress stored now. The handler thread wrote the
   * progress stored when it converted the event; a record waits in the queue while acknowledgements
   * store newer progress, and a heartbeat polled meanwhile carries the newer one. Connect commits
   * the offset of the newest record Kafka acknowledged, so a record polled after that heartbeat
   * with the older progress would move the committed progress back, and a restarted task would read
   * again rows it had committed. The progress stored at poll time covers only rows whose records
   * were all written, so all were polled before this batch: committing it with this batch loses
   * nothing, and the committed progress never moves back (the store's only grows).
   */
  private void withProgressAtPoll(List<DatumRecord> batch) {
    String progress = progressText.of(store.latest());
    for (int i = 0; i < batch.size(); i++) {
      DatumRecord r = batch.get(i);
      if (r.event() == null) {
        continue; // a heartbeat has none queued
      }
      Object had = r.sourceOffset().get(Offsets.SNAPSHOT);
      if (had != progress && !java.util.Objects.equals(had, progress)) {
        Map<String, Object> offset = new java.util.HashMap<>(r.sourceOffset());
        if (progress == null) {
          offset.remove(Offsets.SNAPSHOT);
        } else {
          offset.put(Offsets.SNAPSHOT, progress);
        }
        batch.set(i, r.withOffset(offset));
      }
    }
  }

  /**
   * Returns a heartbeat record when it is time and Connect's offsets are behind what the library
   * stored: the slot's position moved past the newest record (changes of unpublished tables,
   * keepalives), or snapshot progress was acknowledged after the newest record (the end of a
   * snapshot, which no record follows until the next change). Its offset carries that position to
   * Connect's offsets, and with them to the slot. Null otherwise.
   */
  private List<SourceRecord> heartbeat() {
    if (heartbeatMillis <= 0 || running == null) {
      return null;
    }
    long now = System.currentTimeMillis();
    if (now - lastHeartbeat < heartbeatMillis) {
      return null;
    }
    lastHeartbeat = now;
    CdcCheckpoint latest = store.latest();
    PgLsn w = latest == null ? PgLsn.ZERO : latest.watermark();
    String progress = progressText.of(latest);
    boolean moved = w.isAfter(polledUpTo);
    Object polledProgress = polledOffset == null ? null : polledOffset.get(Offsets.SNAPSHOT);
    if (!moved && java.util.Objects.equals(progress, polledProgress)) {
      return null;
    }
    Map<String, Object> offset;
    if (moved || polledOffset == null) {
      offset = Offsets.offset(w, null, 0, 0, source.cluster(), publication, progress);
    } else {
      // the same position as the newest record, with the progress acknowledged since
      offset = new java.util.HashMap<>(polledOffset);
      if (progress == null) {
        offset.remove(Offsets.SNAPSHOT);
      } else {
        offset.put(Offsets.SNAPSHOT, progress);
      }
    }
    Struct key = new Struct(heartbeatKeySchema).put("serverName", config.topicPrefix());
    Struct value =
        new Struct(heartbeatValueSchema)
            .put("ts_ms", now)
            .put("lsn", ((Number) offset.get(Offsets.LSN)).longValue());
    DatumRecord r =
        new DatumRecord(
            partition,
            offset,
            heartbeatTopic,
            heartbeatKeySchema,
            key,
            heartbeatValueSchema,
            value,
            now,
            null,
            null,
            null,
            true);
    if (transactions != null) {
      transactions.commitAfter(r);
    }
    synchronized (inFlight) {
      inFlight.add(r);
    }
    polledOffset = offset;
    polledUpTo = upperBound(offset);
    return List.of(r);
  }

  @Override
  public void commitRecord(SourceRecord record, RecordMetadata metadata) {
    if (record instanceof DatumRecord r) {
      try {
        r.written(handle);
      } catch (RuntimeException e) {
        failure.compareAndSet(null, e);
        throw e;
      }
    }
  }

  @Override
  public void commit() {
    // The library's watermark can run ahead of every record: keepalives, changes of unpublished
    // tables, events that make no record (a snapshot request). Connect's offsets reach such a
    // position only with a later record or heartbeat, so the limit is the lower of the two.
    PgLsn next = store.latestWatermark();
    PgLsn connect = acknowledgedPrefix();
    if (next.isAfter(connect)) {
      next = connect;
    }
    flushLimit = pendingLimit;
    pendingLimit = next;
  }

  /**
   * Drops the acknowledged records at the head of {@link #inFlight} and returns the watermark in
   * the offset of the newest of them (Connect's next offset flush writes at least that one).
   */
  private PgLsn acknowledgedPrefix() {
    synchronized (inFlight) {
      DatumRecord newest = null;
      while (!inFlight.isEmpty() && inFlight.peekFirst().acknowledged()) {
        newest = inFlight.pollFirst();
      }
      if (newest != null) {
        Object lsn = newest.sourceOffset().get(Offsets.LSN);
        if (lsn instanceof Number n) {
          PgLsn w = PgLsn.of(n.longValue());
          if (w.isAfter(acknowledgedUpTo)) {
            acknowledgedUpTo = w;
          }
        }
      }
      return acknowledgedUpTo;
    }
  }

  /** The records converted and waiting for a poll; for tests. */
  int queuedRecords() {
    return queue.size();
  }

  /** The newest checkpoint the library stored in this task, or null if none; for tests. */
  CdcCheckpoint storedCheckpoint() {
    return store.latest();
  }

  @Override
  public void stop() {
    stopping = true;
    stopSignal.countDown();
    PgCdcSource s = source;
    if (s != null) {
      s.stop();
    }
  }

  /** Collects the parts of the records of one event; reused for every event. */
  private static final class PartsSink implements RecordSink {
    String[] topics = new String[2];
    Schema[] keySchemas = new Schema[2];
    Object[] keys = new Object[2];
    Schema[] valueSchemas = new Schema[2];
    Object[] values = new Object[2];
    long[] timestamps = new long[2];
    Headers[] headers = new Headers[2];
    int size;

    void reset() {
      for (int i = 0; i < size; i++) {
        keys[i] = null;
        values[i] = null;
        headers[i] = null;
      }
      size = 0;
    }

    @Override
    public void accept(
        String topic,
        Schema keySchema,
        Object key,
        Schema valueSchema,
        Object value,
        long timestampMillis,
        Headers headers) {
      if (size == topics.length) {
        int n = size * 2;
        topics = java.util.Arrays.copyOf(topics, n);
        keySchemas = java.util.Arrays.copyOf(keySchemas, n);
        keys = java.util.Arrays.copyOf(keys, n);
        valueSchemas = java.util.Arrays.copyOf(valueSchemas, n);
        values = java.util.Arrays.copyOf(values, n);
        timestamps = java.util.Arrays.copyOf(timestamps, n);
        this.headers = java.util.Arrays.copyOf(this.headers, n);
      }
      topics[size] = topic;
      keySchemas[size] = keySchema;
      keys[size] = key;
      valueSchemas[size] = valueSchema;
      values[size] = value;
      timestamps[size] = timestampMillis;
      this.headers[size] = headers;
      size++;
    }
  }
}
