package io.datum.cdc.core.replication;

import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CheckpointTable;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import io.datum.cdc.core.assembly.TransactionAssembler;
import io.datum.cdc.core.assembly.TransactionBuffer;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.delivery.Handoff;
import io.datum.cdc.core.delivery.Merge;
import io.datum.cdc.core.delivery.PeerProducer;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.feedback.SourceCheckpointHandle;
import io.datum.cdc.core.pgoutput.PgOutputDecoder;
import io.datum.cdc.core.server.ServerRole;
import io.datum.cdc.core.types.PgTypeCatalog;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread that reads the replication stream: it decodes each CopyData message, assembles
 * transactions, hands their events to the {@link Merge} (where its {@link PeerProducer}'s read
 * rows, the snapshots', join them before the bounded hand-off), and sends Standby Status Updates
 * whose flush position is the durable watermark (PostgreSQL docs, 55.4 Streaming Replication
 * Protocol, "Standby status update").
 *
 * <p>When the hand-off is full it stops reading but keeps sending status updates at least every
 * status interval, so a slow handler does not make the walsender time out (wal_sender_timeout);
 * memory stays bounded by the hand-off and the transaction being assembled.
 */
final class ReplicationLoop {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicationLoop.class);

  /**
   * How long to park after {@code readPending()} found nothing, or, while the stream is busy
   * ({@link #BUSY_WINDOW_NANOS}), after the {@link ReceiveProbe} did. pgjdbc's {@code
   * readPending()} itself waits up to 1 ms on the socket (PGStream.hasMessagePending), so parking
   * longer only adds latency when the walsender is the slower side; 0.2 ms keeps an idle source
   * cheap.
   */
  private static final long IDLE_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

  /**
   * How long to park between polls once no message came for {@link #QUIET_AFTER_NANOS}. Each poll
   * of an empty socket costs two sleeps and wake-ups (pgjdbc's 1 ms wait, then the park) and a
   * {@code SocketTimeoutException}: with the short park an idle source woke about 830 times a
   * second and used 3.75% of a core doing nothing (the replication thread was 93% of an idle {@code
   * pgcdc stream}'s CPU, half of it in context switches). A quiet stream's next message waits at
   * most this much longer; a busy one never parks this long; a wake-up (an acknowledgement that
   * moved the watermark, a stop) ends the park at once.
   */
  private static final long QUIET_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  /**
   * While the last message came less than this long ago, the stream is busy: the loop asks the
   * {@link ReceiveProbe} whether anything is there instead of waiting on the socket in {@code
   * readPending()}, and parks {@link #IDLE_PARK_NANOS} when nothing is. A reader that waits on the
   * socket is woken by every segment the walsender sends and, on a machine with few cores, preempts
   * the walsender after each {@code send()}; parking instead lets a walsender that is catching up
   * send several messages per wake-up (at 10,000 single-row commits a second on two cores, pgcdc's
   * p99 latency 21-75 ms -> 1.2-1.9 ms; docs/benchmarks.md, latency, item 7). A message waits at
   * most one park longer. Once messages are further apart, the loop waits on the socket again, so a
   * sparse stream still wakes at once.
   */
  private static final long BUSY_WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** No message from the walsender for this long makes the stream quiet. */
  private static final long QUIET_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  private static final long MIN_FEEDBACK_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
  private static final long IDLE_ADVANCE_GAP_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final SourceConfiguration config;
  private final SourceCheckpointHandle handle;
  private final FeedbackCoordinator coordinator;
  private final DecodeErrorHandling decodeErrors;

  /** The producer beside the stream (the snapshots), driven by this loop. */
  private final PeerProducer peer;

  /** The slot this loop created with an exported snapshot, until the peer read at it. */
  private ExportedSlot exported;

  /**
   * True from the creation of a slot with an exported snapshot until streaming starts after the
   * peer read at it (for ever with initial-only): the source is snapshotting, the slot streams
   * nothing.
   */
  private volatile boolean snapshotting;

  /** Where the stream's events and the peer's read rows meet before the hand-off. */
  private final Merge merge;

  /** The result of CREATE_REPLICATION_SLOT with an exported snapshot. */
  private record ExportedSlot(PgLsn consistentPoint, String snapshotName) {}

  /** Created by {@link #open} once the protocol version is negotiated. */
  private volatile TransactionAssembler assembler;

  private PgOutputOptions protocol;

  /**
   * The column types resolved from the catalog; kept by the next loop after a reconnect; null
   * before PostgreSQL 14 (text mode, user types as text).
   */
  private PgTypeCatalog types;

  private final long statusIntervalNanos;

  /** The server's role, read again at every open; where the source writes. */
  private final ServerRole role;

  /** Run after a stop request, before the final status update (stores late acknowledgements). */
  private final Runnable beforeFinalFeedback;

  private volatile boolean stopRequested;
  private volatile Thread thread;
  private Connection connection;
  private PGReplicationStream stream;

  /** Whether the replication connection has bytes, asked without waiting; null if unknowable. */
  private ReceiveProbe receiveProbe;

  private PgLsn lastSentFlush = PgLsn.ZERO;
  private long lastStatusNanos;
  private long lastIdleAdvanceNanos;

  /** When the last message from the walsender came ({@link System#nanoTime}). */
  private long lastMessageNanos = System.nanoTime();

  ReplicationLoop(
      SourceConfiguration config,
      FeedbackCoordinator coordinator,
      SourceCheckpointHandle handle,
      Handoff handoff,
      DecodeErrorHandling decodeErrors,
      PeerProducer peer,
      ServerRole role,
      Runnable beforeFinalFeedback) {
    this.peer = peer;
    this.role = role;
    this.beforeFinalFeedback = beforeFinalFeedback;
    this.decodeErrors = decodeErrors;
    this.config = config;
    this.coordinator = coordinator;
    this.handle = handle;
    this.merge = new Merge(handoff, coordinator::acknowledge);
    merge.observer(peer);
    this.statusIntervalNanos = config.get(SourceOptions.STATUS_INTERVAL).toNanos();
  }

  /**
   * Connects, checks the slot and publication (creating them if configured), and starts streaming
   * at the watermark. Called on the caller's thread so that configuration errors surface at once.
   *
   * @throws CdcException if connecting or starting fails
   */
  void open() {
    open(false, null);
  }

  /**
   * Like {@link #open()}; when {@code reconnecting}, a missing slot is never created (it was
   * dropped: a new one would skip changes) and is reported as such.
   *
   * @param reconnecting true at a reconnect
   * @param previous the loop of the lost connection, whose type catalog this one keeps; or null
   */
  void open(boolean reconnecting, ReplicationLoop previous) {
    String slot = config.slot();
    ClusterCheck.TimelineChange promotion;
    ClusterIdentity server;
    try {
      // before anything else: a store of another cluster must not make preflight create a slot or
      // a publication there, nor resume at an unrelated position
      try {
        connection = DriverManager.getConnection(config.jdbcUrl(), replicationProperties());
      } catch (SQLException e) {
        throw PgErrors.map(
            "cannot connect for replication of slot \""
                + slot
                + "\" to "
                + PgErrors.redact(config.jdbcUrl()),
            e);
      }
      server = ClusterCheck.identify(connection);
      promotion =
          ClusterCheck.verify(
              coordinator.cluster(), server, coordinator.watermark(), connection, config);
      ClusterCheck.verifyPublication(
          coordinator.publication(),
          coordinator.watermark(),
          !handle.storedSnapshot().equals(SnapshotProgress.NONE),
          config);
      leftOut = storeTable(server, connection);
    } catch (SQLException e) {
      closeQuietly();
      throw PgErrors.map(
          "cannot identify the server of slot \""
              + slot
              + "\" at "
              + PgErrors.redact(config.jdbcUrl()),
          e);
    } catch (RuntimeException e) {
      closeQuietly();
      throw e;
    }
    SlotPreflight.Outcome checked;
    try {
      checked =
          SlotPreflight.run(
              config,
              coordinator,
              reconnecting,
              promotion,
              () -> stopRequested,
              previous == null ? null : previous.types,
              peer,
              role);
      protocol = checked.protocol();
      types = checked.types();
    } catch (RuntimeException e) {
      closeQuietly();
      throw e;
    }
    try {
      timeZone = connection.unwrap(PGConnection.class).getParameterStatus("TimeZone");
      peer.opened(
          new PeerProducer.Session(
              types,
              timeZone,
              checked.serverVersion(),
              coordinator.watermark(),
              reconnecting,
              checked.createWithSnapshot()));
      if (checked.createWithSnapshot()) {
        exported = createSlotExportingSnapshot(checked.serverVersion());
        // the initial snapshot reads the tables of this publication: its checkpoints say so, so
        // that a later start with another publication is refused like one after streaming
        coordinator.publication(config.publication());
        snapshotting = true;
        this.server = server;
        return; // streaming starts once the peer read at the exported snapshot (run)
      }
    } catch (SQLException e) {
      closeQuietly();
      throw PgErrors.map("cannot create replication slot \"" + slot + "\" for its snapshot", e);
    } catch (RuntimeException e) {
      closeQuietly();
      throw e;
    }
    startStreaming(server);
  }

  /**
   * The checkpoint store's own table when it is in the decoded database ({@link
   * io.datum.cdc.CdcCheckpointStore#checkpointTable()}): its changes are the source's own
   * acknowledgements and are left out; null otherwise.
   *
   * @throws io.datum.cdc.CdcConfigurationException if the store is in a database of this name but
   *     could not tell its cluster, and the publication publishes a table of its table's name:
   *     neither leaving its changes out (they may be another cluster's table's) nor delivering them
   *     (each acknowledgement would come back as a change) is safe
   */
  private TableId storeTable(ClusterIdentity server, Connection connection) throws SQLException {
    CheckpointTable own = config.store().checkpointTable().orElse(null);
    if (own == null || server == null || !own.database().equals(server.database())) {
      return null;
    }
    if (own.systemIdentifier() == null) {
      // same database name, cluster unknown: if the publication publishes a table of that name,
      // the changes may be the store's own writes (each acknowledgement would come back as a
      // change, without end) or a table of another cluster's: neither can be chosen safely
      boolean published;
      try (java.sql.PreparedStatement ps =
          connection.prepareStatement(
              "SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = ?"
                  + " AND schemaname = ? AND tablename = ?)")) {
        ps.setString(1, config.publication());
        ps.setString(2, own.table().schema());
        ps.setString(3, own.table().table());
        try (java.sql.ResultSet rs = ps.executeQuery()) {
          rs.next();
          published = rs.getBoolean(1);
        }
      }
      if (published) {
        throw new io.datum.cdc.CdcConfigurationException(
            "publication \""
                + config.publication()
                + "\" publishes "
                + own.table()
                + ", the table of the checkpoint store of slot \""
                + config.slot()
                + "\" in database "
                + own.database()
                + " ("
                + config.store().location()
                + "), but the store's role may not read pg_control_system(), so nothing proves"
                + " it is this cluster's table: its changes cannot be left out, and every stored"
                + " acknowledgement would come back as a change. GRANT EXECUTE ON FUNCTION"
                + " pg_control_system() TO the store's role, or keep the table out of the"
                + " publication, or keep the checkpoints elsewhere");
      }
      return null;
    }
    if (!own.systemIdentifier().equals(server.systemIdentifierText())) {
      return null;
    }
    LOG.info(
        "slot {}: leaving out the changes of {}, the checkpoint store's own table",
        config.slot(),
        own.table());
    return own.table();
  }

  /** The checkpoint store's own table, whose changes the decoder leaves out; or null. */
  private TableId leftOut;

  /** The server identified at open, adopted into checkpoints once streaming starts. */
  private ClusterIdentity server;

  /** The walsender session's TimeZone (ParameterStatus), read at open; null if not reported. */
  private String timeZone;

  /**
   * Creates the slot on the replication connection with an exported snapshot: {@code
   * CREATE_REPLICATION_SLOT name LOGICAL pgoutput (SNAPSHOT 'export'[, FAILOVER true])} on
   * PostgreSQL 15+, {@code ... EXPORT_SNAPSHOT} on 14 (PostgreSQL docs, 53.4 Streaming Replication
   * Protocol). Every slot option goes into this one command: the snapshot lives only until the
   * connection's next command. PostgreSQL waits for the transactions open when it began (also
   * prepared ones) before it returns (snapbuild.c).
   */
  private ExportedSlot createSlotExportingSnapshot(int serverVersion) throws SQLException {
    String slot = config.slot();
    String command =
        "CREATE_REPLICATION_SLOT "
            + PgErrors.quoteIdentifier(slot)
            + " LOGICAL pgoutput"
            + (serverVersion >= 150000
                ? " (SNAPSHOT 'export'"
                    + (config.get(SourceOptions.FAILOVER_SLOT) ? ", FAILOVER true" : "")
                    + ")"
                : " EXPORT_SNAPSHOT");
    Duration timeout = config.get(SourceOptions.SLOT_CREATION_TIMEOUT);
    try (Statement st = connection.createStatement()) {
      if (!timeout.isZero()) {
        // statement_timeout does not cover a replication command: pgjdbc cancels the query
        st.setQueryTimeout((int) Math.max(1, (timeout.toMillis() + 999) / 1000));
      }
      ResultSet rs =
          role.creatingSlot(slot, connection, () -> stopRequested, () -> st.executeQuery(command));
      rs.next();
      PgLsn consistentPoint = PgLsn.parse(rs.getString("consistent_point"));
      String name = rs.getString("snapshot_name");
      LOG.info(
          "created logical replication slot {} (pgoutput{}) at consistent point {} with exported"
              + " snapshot {}",
          slot,
          config.get(SourceOptions.FAILOVER_SLOT) ? ", failover" : "",
          consistentPoint,
          name);
      return new ExportedSlot(consistentPoint, name);
    } catch (SQLException e) {
      if (!timeout.isZero() && "57014".equals(e.getSQLState())) {
        String open;
        try (Connection admin =
            DriverManager.getConnection(config.jdbcUrl(), SlotPreflight.adminProperties(config))) {
          open = new SlotAdmin(admin).openTransactions(role);
        } catch (SQLException listing) {
          open = "(cannot list them: " + listing.getMessage() + ")";
        }
        throw SlotAdmin.creationTimedOut(slot, timeout, open, e);
      }
      throw e;
    }
  }

  /** Sends START_REPLICATION at the watermark and sets up decoding. */
  private void startStreaming(ClusterIdentity server) {
    String slot = config.slot();
    try {
      PgLsn start = coordinator.watermark();
      var builder =
          connection
              .unwrap(PGConnection.class)
              .getReplicationAPI()
              .replicationStream()
              .logical()
              .withSlotName(slot)
              .withStartPosition(LogSequenceNumber.valueOf(start.asLong()))
              .withSlotOption("publication_names", PgErrors.quoteIdentifier(config.publication()));
      for (var option : protocol.slotOptions().entrySet()) {
        builder = builder.withSlotOption(option.getKey(), option.getValue());
      }
      stream =
          builder
              .withStatusInterval(
                  (int) config.get(SourceOptions.STATUS_INTERVAL).toMillis(), TimeUnit.MILLISECONDS)
              // since pgjdbc 42.7.0 the driver otherwise confirms keepalive WAL ends by itself
              .withAutomaticFlush(false)
              .start();
      receiveProbe = ReceiveProbe.of(connection);
      lastSentFlush = start;
      lastStatusNanos = System.nanoTime();
      // only now: checkpoints name the server streamed from, not one a failed check ended at (a
      // promoted standby without the slot must still be seen as a promotion at the next start)
      coordinator.cluster(server);
      coordinator.publication(config.publication());
      if (types != null) {
        // timestamptz text (in ranges, composites, arrays of user types) follows the walsender
        // session's TimeZone, a GUC_REPORT parameter pgjdbc keeps from the server's ParameterStatus
        types.timeZone(timeZone);
      }
      PgOutputDecoder decoder = protocol.decoder(types);
      decoder.valueErrors(decodeErrors.policy());
      decoder.leaveOut(leftOut);
      assembler =
          new TransactionAssembler(
              slot,
              coordinator,
              decoder,
              new TransactionBuffer.Memory(
                  config.get(SourceOptions.MEMORY_BUDGET),
                  config.get(SourceOptions.SPILL_DIRECTORY)),
              decodeErrors,
              start);
      LOG.info(
          "streaming slot {} publication {} from {} with {}",
          slot,
          config.publication(),
          start,
          protocol.slotOptions());
    } catch (SQLException e) {
      closeQuietly();
      throw PgErrors.map("cannot start replication from slot \"" + slot + '"', e);
    }
  }

  /**
   * Runs the loop on the calling thread until {@link #requestStop()} or a failure.
   *
   * @throws CdcException if the connection fails or a message cannot be decoded
   */
  void run() {
    thread = Thread.currentThread();
    try {
      if (exported != null) {
        ExportedSlot slot = exported;
        exported = null;
        boolean streamNext;
        try {
          streamNext =
              peer.readExported(
                  slot.snapshotName(),
                  slot.consistentPoint(),
                  events -> merge.deliverAll(events, () -> stopRequested));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        if (stopRequested) {
          return;
        }
        if (!streamNext) {
          awaitPeerDone();
          return;
        }
        startStreaming(server);
        snapshotting = false;
      }
      peer.streamStarted();
      while (!stopRequested) {
        if (peer.done()) {
          LOG.info("slot {}: the peer producer's work is done; stopping", config.slot());
          // the handler ends once this loop did (it is not stopping): store, do not wait for it
          handle.persistIfChanged();
          sendFeedback(true);
          return;
        }
        Merge.Step step;
        try {
          step = merge.step(assembler);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          stopRequested = true;
          continue;
        }
        if (step == Merge.Step.PROGRESS) {
          continue;
        }
        if (step == Merge.Step.FULL) {
          // the handler is slow: keep the walsender from timing out while we do not read
          sendFeedback(false);
          continue;
        }
        ByteBuffer message = busyAndNothingToRead() ? null : stream.readPending();
        if (message == null) {
          maybeAdvanceIdle();
          sendFeedback(false);
          boolean quiet =
              System.nanoTime() - lastMessageNanos >= QUIET_AFTER_NANOS && merge.isIdle();
          LockSupport.parkNanos(this, quiet ? QUIET_PARK_NANOS : IDLE_PARK_NANOS);
          continue;
        }
        lastMessageNanos = System.nanoTime();
        assembler.accept(message, stream.getLastReceiveLSN().asLong());
        sendFeedback(false);
      }
      beforeFinalFeedback.run();
      sendFeedback(true);
    } catch (SQLException e) {
      if (stopRequested) {
        return;
      }
      if ("40001".equals(e.getSQLState()) && role.standby()) {
        // a conflict with recovery cancelled the standby's walsender (PostgreSQL: "canceling
        // statement due to conflict with recovery"): a reconnect either goes on or, if the conflict
        // invalidated the slot, finds the reason in pg_replication_slots and stops naming it
        throw new CdcConnectionException(
            "replication from slot \""
                + config.slot()
                + "\" on the standby was cancelled by a conflict with recovery: "
                + e.getMessage(),
            e);
      }
      throw PgErrors.map("replication from slot \"" + config.slot() + "\" failed", e);
    } finally {
      closeQuietly();
    }
  }

  /**
   * The peer read at a new slot's exported snapshot and is the source's whole work (initial-only):
   * waits until it is done (every read row acknowledged and stored) without streaming.
   */
  private void awaitPeerDone() {
    while (!stopRequested && !peer.done()) {
      LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(20));
    }
    if (stopRequested) {
      beforeFinalFeedback.run();
      return;
    }
    LOG.info("slot {}: stopping; the slot stays at its consistent point", config.slot());
  }

  /** Asks the loop to stop after the current message; it sends a final status update. */
  void requestStop() {
    stopRequested = true;
    wakeUp();
  }

  /** Wakes the loop so that it sends a status update for a new watermark promptly. */
  void wakeUp() {
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /**
   * Returns true while the initial snapshot exported at this loop's slot creation is read (and,
   * with initial-only, until it is acknowledged): nothing is streamed yet.
   */
  boolean snapshotting() {
    return snapshotting;
  }

  long transactionsSpilled() {
    TransactionAssembler a = assembler;
    return a == null ? 0 : a.transactionsSpilled();
  }

  long bytesSpilled() {
    TransactionAssembler a = assembler;
    return a == null ? 0 : a.bytesSpilled();
  }

  long transactionsDelivered() {
    TransactionAssembler a = assembler;
    return a == null ? 0 : a.transactionsDelivered();
  }

  private void maybeAdvanceIdle() {
    long now = System.nanoTime();
    if (now - lastIdleAdvanceNanos < IDLE_ADVANCE_GAP_NANOS
        || !assembler.isIdle()
        || !merge.isIdle()
        || coordinator.hasPending()) {
      return;
    }
    lastIdleAdvanceNanos = now;
    // after readPending() returned null, the last receive LSN is a keepalive's WAL end or the
    // start of the last message, all of whose output has been processed
    PgLsn walEnd = PgLsn.of(stream.getLastReceiveLSN().asLong());
    if (handle.advanceIdle(walEnd)) {
      LOG.debug(
          "slot {}: nothing pending, watermark moved to keepalive WAL end {}",
          config.slot(),
          walEnd);
    }
  }

  /**
   * True when the stream is busy ({@link #BUSY_WINDOW_NANOS}) and the probe is certain that nothing
   * waits to be read; then the loop parks rather than wait on the socket.
   */
  private boolean busyAndNothingToRead() {
    return receiveProbe != null
        && System.nanoTime() - lastMessageNanos < BUSY_WINDOW_NANOS
        && receiveProbe.nothingToRead();
  }

  private void sendFeedback(boolean force) throws SQLException {
    if (stream == null) {
      return; // the peer reads at the exported snapshot before streaming starts
    }
    PgLsn flush = handle.flushPosition();
    long now = System.nanoTime();
    boolean changed = !flush.equals(lastSentFlush);
    if (force
        || (changed && now - lastStatusNanos >= MIN_FEEDBACK_GAP_NANOS)
        || now - lastStatusNanos >= statusIntervalNanos) {
      LogSequenceNumber lsn = LogSequenceNumber.valueOf(flush.asLong());
      stream.setFlushedLSN(lsn);
      stream.setAppliedLSN(lsn);
      stream.forceUpdateStatus();
      lastSentFlush = flush;
      lastStatusNanos = now;
    }
  }

  private Properties replicationProperties() {
    Properties p = new Properties();
    p.putAll(config.properties());
    PGProperty.REPLICATION.set(p, "database");
    PGProperty.PREFER_QUERY_MODE.set(p, "simple");
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, "10");
    PGProperty.APPLICATION_NAME.set(p, "datum-cdc " + config.slot());
    // value text formats the decoder expects; pgjdbc itself sets DateStyle=ISO, extra_float_digits
    PGProperty.OPTIONS.set(p, "-c IntervalStyle=iso_8601 -c bytea_output=hex");
    return p;
  }

  private void closeQuietly() {
    if (assembler != null) {
      assembler.close(); // releases buffered transactions and deletes their spill files
    }
    try {
      if (stream != null && !stream.isClosed()) {
        stream.close();
      }
    } catch (SQLException e) {
      LOG.debug("closing replication stream of slot {}: {}", config.slot(), e.toString());
    }
    try {
      if (connection != null) {
        connection.close();
      }
    } catch (SQLException e) {
      LOG.debug("closing replication connection of slot {}: {}", config.slot(), e.toString());
    }
  }
}
