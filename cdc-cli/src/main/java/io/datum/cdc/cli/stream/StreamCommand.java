package io.datum.cdc.cli.stream;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.PgLsn;
import io.datum.cdc.cli.common.ServerOptions;
import io.datum.cdc.cli.common.StoreRemedies;
import io.datum.cdc.cli.common.StoreUris;
import io.datum.cdc.cli.json.JsonLinesWriter;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.micrometer.TimedCheckpointStore;
import io.micrometer.core.instrument.Tags;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pgcdc stream}: streams a slot's changes as JSON lines (format 1) to stdout, acknowledging
 * each event after its line is written and flushed; or after the reader wrote it back ({@code
 * --acks-from}); or to a file, acknowledging after an fsync covered the line ({@code --output}).
 */
@Command(
    name = "stream",
    mixinStandardHelpOptions = true,
    description = "Stream committed changes of a publication as JSON lines on stdout.")
public final class StreamCommand implements Callable<Integer> {

  /** Creates the command; picocli sets its options. */
  public StreamCommand() {}

  private static final Logger LOG = LoggerFactory.getLogger(StreamCommand.class);

  @Spec CommandSpec spec;

  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--slot",
      required = true,
      description = "logical replication slot ([a-z0-9_]{1,63})")
  String slot;

  @Option(names = "--publication", required = true, description = "publication to stream")
  String publication;

  @Option(
      names = "--store",
      required = true,
      description = "checkpoint store URI: memory:, file:/dir, ...")
  String store;

  @Option(names = "--create-slot", description = "create the slot if it does not exist")
  boolean createSlot;

  @Option(
      names = "--create-publication",
      description =
          "create the publication if it does not exist, with --tables or --all-tables; an"
              + " existing one must publish them (it is never changed)")
  boolean createPublication;

  @Option(
      names = "--tables",
      split = ",",
      paramLabel = "schema.table",
      description = "tables of the publication --create-publication creates")
  List<String> tables = List.of();

  @Option(
      names = "--all-tables",
      description =
          "let --create-publication create it FOR ALL TABLES (a superuser only): PostgreSQL then"
              + " refuses UPDATE and DELETE on every table without a primary key or replica"
              + " identity, which pgcdc lists in a warning")
  boolean allTables;

  @Option(
      names = "--max-events",
      paramLabel = "N",
      description =
          "exit 0 once N events were printed and acknowledged (with --output: synced; with"
              + " --acks-from: acknowledged by the reader)")
  Long maxEvents;

  @Option(
      names = "--idle-exit",
      paramLabel = "SECONDS",
      description =
          "exit 0 once no event was printed (or acknowledged) for SECONDS (a decimal number),"
              + " none awaits acknowledgement, and the confirmed position reached the server's WAL"
              + " position read when those SECONDS had passed: a walsender busy decoding a large"
              + " transaction is not idle")
  Double idleExitSeconds;

  @Option(
      names = "--stop-at-lsn",
      paramLabel = "LSN|current",
      description =
          "exit 0 once every change up to LSN (X/X) is printed and its acknowledgement stored"
              + " and confirmed; current: the server's WAL position read at start (run until"
              + " caught up). Changes after it may be printed too")
  String stopAtLsn;

  @Option(
      names = "--retry-start",
      description =
          "when the server cannot be reached at start, retry as --reconnect retries a lost"
              + " connection (same attempts and backoff); default: fail at once")
  boolean retryStart;

  @Option(
      names = "--reconnect",
      paramLabel = "ATTEMPTS",
      defaultValue = "unlimited",
      description =
          "after a connection loss, reconnect up to ATTEMPTS times with exponential"
              + " backoff (0.2 s doubling to 30 s, with jitter); 0 exits at the first loss"
              + " (default: unlimited)")
  String reconnect;

  @Option(
      names = "--durable-acks",
      paramLabel = "event|transaction",
      defaultValue = "event",
      description =
          "which acknowledgements reach the store: every one (event, the default; stored in the"
              + " background, many per store write; after a crash only events whose"
              + " acknowledgement was not stored yet come again) or those that complete a"
              + " transaction (transaction: fewer store writes; after a crash the acknowledged"
              + " events of a transaction not completely acknowledged come again too)")
  String durableAcks;

  @Option(
      names = "--on-decode-error",
      paramLabel = "stop|raw|skip",
      defaultValue = "raw",
      description =
          "a change with a column value that cannot be decoded (a type dropped before the change"
              + " was read, an extension type in --binary mode): raw (default) prints it with the"
              + " value as PostgreSQL sent it (text, or base64 of the binary bytes) and the column"
              + " listed in \"undecoded\"; stop exits with the error (restarts stop there again);"
              + " skip leaves the change out, logging it at WARN")
  String onDecodeError;

  @Option(
      names = "--snapshot",
      paramLabel = "MODE[,MODE]",
      split = ",",
      description =
          "copy the rows that already exist, as \"op\":\"read\" lines: never (default);"
              + " initial (every published table when the slot is created, at its exported"
              + " snapshot, or online when the store holds no completed initial snapshot; then"
              + " stream); initial-only (the same, then exit 0 once every row is acknowledged);"
              + " on-request (also snapshot tables asked for with pgcdc snapshot while"
              + " streaming); combine as initial,on-request. PostgreSQL 14+")
  List<String> snapshotModes = List.of();

  @Option(
      names = "--snapshot-parallelism",
      paramLabel = "N",
      description =
          "connections reading the initial snapshot at a new slot at once (default 1; with"
              + " --snapshot only)")
  Integer snapshotParallelism;

  @Option(
      names = "--snapshot-chunk-rows",
      paramLabel = "N",
      description =
          "rows per snapshot chunk, the unit of stored progress (default 8192; with --snapshot"
              + " only)")
  Integer snapshotChunkRows;

  @Option(
      names = "--progress-interval",
      paramLabel = "SECONDS",
      defaultValue = "5",
      description =
          "while a snapshot runs, a progress line on stderr every SECONDS (a decimal number;"
              + " default 5), and one when it completes; on a terminal one line redrawn instead; 0:"
              + " none. Never on stdout")
  double progressIntervalSeconds;

  @Option(
      names = "--messages",
      description =
          "also stream logical decoding messages (pg_logical_emit_message; PostgreSQL 14+)")
  boolean messages;

  @Option(
      names = "--wait-for-slot",
      paramLabel = "SECONDS",
      defaultValue = "0",
      description =
          "when the slot is active for another process, wait up to SECONDS for it (or a"
              + " duration: 500ms, 30s, 5m; default 0: fail at once, naming that process)")
  String waitForSlotSeconds;

  @Option(
      names = "--slot-create-timeout",
      paramLabel = "SECONDS",
      defaultValue = "0",
      description =
          "how long --create-slot may wait for the transactions and prepared transactions open"
              + " when it began (PostgreSQL waits for them), then fail naming them (default 0: as"
              + " long as they stay open; a duration such as 5m works too)")
  String slotCreateTimeoutSeconds;

  @Option(
      names = "--trust-slot-position",
      description =
          "resume at the slot's position when it is after the stored watermark"
              + " (the changes in between are lost); default: refuse to start")
  boolean trustSlotPosition;

  @Option(
      names = "--allow-cluster-change",
      description =
          "resume although the stored checkpoint names another cluster (system identifier),"
              + " database, or a timeline this server does not continue (a slot moved by"
              + " pg_upgrade); default: refuse to start, since the stored positions would skip"
              + " this server's changes")
  boolean allowClusterChange;

  @Option(
      names = "--allow-publication-change",
      description =
          "resume although the stored checkpoint was written streaming another publication (the"
              + " watermark passed over changes that one filtered out, which this one would never"
              + " deliver) or after an initial snapshot of another publication's tables; default:"
              + " refuse to start")
  boolean allowPublicationChange;

  @Option(
      names = "--primary-url",
      paramLabel = "JDBC-URL",
      description =
          "when --url is a hot standby (PostgreSQL 16+): its primary's JDBC URL (same user and"
              + " password), where pgcdc writes what a standby cannot: a publication"
              + " --create-publication creates, snapshot watermarks, and while --create-slot"
              + " creates the slot on the standby, a running-transactions record"
              + " (pg_log_standby_snapshot()); nothing is written on the standby. Without it,"
              + " --snapshot and creating a missing publication are refused on a standby")
  String primaryUrl;

  @Option(
      names = "--failover-slot",
      description =
          "create the slot as a failover slot (PostgreSQL 17+), which a physical standby with"
              + " sync_replication_slots = on keeps, so that streaming resumes on the standby"
              + " after its promotion; an existing slot must be one; refused on PostgreSQL 16 and"
              + " older; give the URL every host with targetServerType=primary")
  boolean failoverSlot;

  @Option(
      names = "--acks-from",
      paramLabel = "FILE|-|fd:N",
      description =
          "acknowledge only the events the reader of stdout writes back here, one line each (the"
              + " event's JSON line, or TX_END_LSN EVENT_INDEX, plus CHUNK for a read row): - is"
              + " stdin, fd:N an inherited file descriptor, FILE a FIFO (read to its end) or a"
              + " regular file (followed from its end); pgcdc stops when it ends. See"
              + " docs/pgcdc.md")
  String acksFrom;

  @Option(
      names = "--output",
      paramLabel = "FILE",
      description =
          "append the JSON lines to FILE instead of stdout and acknowledge an event only once an"
              + " fsync covered its line (batched: one fsync for the lines written while the"
              + " previous one ran)")
  Path output;

  @Option(
      names = "--metrics-port",
      paramLabel = "PORT",
      description =
          "serve the source's meters in Prometheus' text format at http://ADDRESS:PORT/metrics"
              + " and its health as JSON at /health (200 while streaming, 503 while reconnecting"
              + " or failed); 0 picks a free port; the address is printed on stderr. See"
              + " docs/metrics.md")
  Integer metricsPort;

  @Option(
      names = "--metrics-address",
      paramLabel = "ADDRESS",
      defaultValue = "0.0.0.0",
      description = "the address --metrics-port listens on (default 0.0.0.0: every interface)")
  String metricsAddress;

  @Option(names = "--verbose", description = "info logs and stack traces of errors on stderr")
  boolean verbose;

  @Mixin PgOutputCliOptions pgoutput = new PgOutputCliOptions();

  /**
   * Adds the flags of the source options that have no flag of their own (see {@code
   * StreamFlags.derive}); call it on the {@code stream} command's spec before parsing.
   *
   * @param spec the command's spec
   */
  public static void deriveFlags(CommandSpec spec) {
    StreamFlags.derive(spec);
  }

  private boolean progressIntervalOk() {
    return progressIntervalSeconds >= 0 && !Double.isInfinite(progressIntervalSeconds);
  }

  /**
   * Runs the command: checks every option, then streams until a limit, a signal or a failure.
   *
   * @return the exit code, 0
   * @throws Exception the failure, which {@code Pgcdc} maps to an exit code and a message
   */
  @Override
  public Integer call() throws Exception {
    // every option is checked before anything is opened: a typo creates nothing
    Map<SourceOption<?>, Object> options = StreamFlags.values(spec);
    if (!progressIntervalOk()) {
      throw new CdcConfigurationException(
          "--progress-interval must be 0 (none) or a positive number of seconds, was "
              + progressIntervalSeconds);
    }
    if (snapshotModes.isEmpty() && (snapshotParallelism != null || snapshotChunkRows != null)) {
      throw new CdcConfigurationException(
          (snapshotParallelism != null ? "--snapshot-parallelism" : "--snapshot-chunk-rows")
              + " applies only with --snapshot MODE (it would be ignored)");
    }
    if ((!tables.isEmpty() || allTables) && !createPublication) {
      throw new CdcConfigurationException(
          (allTables ? "--all-tables" : "--tables") + " applies only with --create-publication");
    }
    if (createPublication && tables.isEmpty() == !allTables) {
      throw new CdcConfigurationException(
          allTables
              ? "--tables and --all-tables exclude each other"
              : "--create-publication needs --tables schema.table,... or --all-tables (FOR ALL"
                  + " TABLES: PostgreSQL then refuses UPDATE and DELETE on every table without a"
                  + " primary key or replica identity)");
    }
    if (maxEvents != null && maxEvents < 1) {
      throw new CdcConfigurationException("--max-events must be at least 1, was " + maxEvents);
    }
    if (idleExitSeconds != null
        && !(idleExitSeconds >= 0.001 && idleExitSeconds <= SourceOption.MAX_DURATION_SECONDS)) {
      throw new CdcConfigurationException(
          "--idle-exit must be a number of seconds from 0.001 to "
              + SourceOption.MAX_DURATION_SECONDS
              + ", was "
              + idleExitSeconds);
    }
    if (acksFrom != null && output != null) {
      throw new CdcConfigurationException(
          "--acks-from and --output exclude each other: with --acks-from the reader's"
              + " acknowledgement is what counts, so the file's fsync would add nothing");
    }
    if (acksFrom != null) {
      ReaderAcks.check(acksFrom);
    }
    if (metricsPort != null && (metricsPort < 0 || metricsPort > 65535)) {
      throw new CdcConfigurationException(
          "--metrics-port must be 0 (a free port) to 65535, was " + metricsPort);
    }
    if (metricsAddress.isBlank()) {
      throw new CdcConfigurationException(
          "--metrics-address must be a host name or IP address (0.0.0.0: every interface)");
    }
    if (metricsPort == null && !"0.0.0.0".equals(metricsAddress)) {
      throw new CdcConfigurationException(
          "--metrics-address applies only with --metrics-port PORT (it would be ignored)");
    }
    // every log line names the slot: the library's threads carry it in their names, and so does
    // this one while it streams
    Thread main = Thread.currentThread();
    String mainName = main.getName();
    main.setName("pgcdc-stream-" + slot);
    try (MetricsEndpoint endpoint = metricsEndpoint()) {
      return stream(endpoint, options);
    } finally {
      main.setName(mainName);
    }
  }

  private MetricsEndpoint metricsEndpoint() {
    if (metricsPort == null) {
      return null;
    }
    // the lag is read when scraped, at most once a second however often that is
    MetricsEndpoint endpoint =
        MetricsEndpoint.start(metricsAddress, metricsPort, slot, Duration.ofSeconds(1));
    System.err.println(
        "pgcdc: metrics at http://"
            + (metricsAddress.contains(":") && !metricsAddress.startsWith("[")
                ? "[" + metricsAddress + "]"
                : metricsAddress)
            + ':'
            + endpoint.port()
            + "/metrics, health at /health (slot "
            + slot
            + ')');
    return endpoint;
  }

  private int stream(MetricsEndpoint endpoint, Map<SourceOption<?>, Object> options)
      throws Exception {
    String password = serverOptions.password();
    String url = serverOptions.url();
    String user = serverOptions.user();
    int reconnectAttempts = (Integer) options.get(SourceOptions.RECONNECT_ATTEMPTS);
    long progressMillis =
        progressIntervalSeconds == 0 ? 0 : Math.max(1, (long) (progressIntervalSeconds * 1000));
    Path created = firstMissing(StoreUris.fileStoreDirectory(store));
    try {
      try (CdcCheckpointStore checkpoints = timed(CheckpointStores.open(store), endpoint)) {
        PgCdcSource.Builder builder = PgCdcSource.builder().checkpointStore(checkpoints);
        StreamFlags.apply(options, builder);
        String nothingLeft = nothingLeft(options, checkpoints);
        builder.password(password);
        ServerPosition server = new ServerPosition(url, primaryUrl, user, password);
        boolean stopAtCurrent = "current".equals(stopAtLsn);
        PgLsn stopAt = stopAtLsn == null || stopAtCurrent ? null : parseLsn(stopAtLsn);
        StreamSession.Limits limits =
            new StreamSession.Limits(
                maxEvents == null ? Long.MAX_VALUE : maxEvents,
                idleExitSeconds == null ? 0 : (long) (idleExitSeconds * 1000),
                stopAt,
                stopAtCurrent,
                server,
                // the first attempt, then --reconnect more (unlimited stays unlimited)
                retryStart ? (int) Math.min(Integer.MAX_VALUE, 1L + reconnectAttempts) : 1,
                200,
                30_000);
        Supplier<PgCdcSource> sources =
            () -> {
              try {
                PgCdcSource built = builder.build(); // loads the stored checkpoint
                if (endpoint != null) {
                  endpoint.bind(built);
                }
                return built;
              } catch (CdcStoreException e) {
                throw StoreRemedies.withRemedy(e, store, slot);
              }
            };
        AtomicReference<StreamSession> session = new AtomicReference<>();
        if (output != null) {
          try (SyncedFileOutput file =
              SyncedFileOutput.open(
                  output,
                  offset -> StreamSession.acknowledge(session.get().source().checkpoints(), offset),
                  e -> session.get().fail(e))) {
            session.set(
                new StreamSession(sources, StreamSession.file(file), limits, progressMillis));
            session.get().run();
          }
        } else if (acksFrom != null) {
          ReaderAcks acks =
              new ReaderAcks(
                  acksFrom,
                  offset -> {
                    session.get().touch();
                    return StreamSession.acknowledge(session.get().source().checkpoints(), offset);
                  });
          session.set(
              new StreamSession(
                  sources,
                  StreamSession.readerAcknowledged(stdout(), acks),
                  limits,
                  progressMillis));
          acks.start();
          session.get().run();
          if (acks.failure() != null) {
            throw acks.failure();
          }
        } else {
          warnIfStdoutIsAPipe();
          session.set(new StreamSession(sources, heldStdout(), limits, progressMillis));
          session.get().run();
        }
        if (nothingLeft != null) {
          System.err.println(nothingLeft); // said once the source ended well, never before an error
        }
      }
    } catch (Exception e) {
      removeIfEmpty(created, e); // a failed start leaves no empty store directories behind
      throw e;
    }
    return 0;
  }

  /**
   * With {@code --snapshot initial-only} and a stored checkpoint whose initial snapshot is
   * complete, the source ends at once: returns the line that says so (printed once it ended without
   * an error) instead of exiting 0 without a word; null otherwise.
   */
  private String nothingLeft(Map<SourceOption<?>, Object> options, CdcCheckpointStore checkpoints) {
    Object modes = options.get(SourceOptions.SNAPSHOT_MODES);
    if (!(modes instanceof java.util.Set<?> set) || !set.contains(SnapshotMode.INITIAL_ONLY)) {
      return null;
    }
    java.util.Optional<io.datum.cdc.CdcCheckpoint> stored;
    try {
      stored = checkpoints.load(slot);
    } catch (CdcStoreException e) {
      throw StoreRemedies.withRemedy(e, store, slot);
    }
    return stored
        .filter(c -> c.snapshot().initialCompleted())
        .map(
            c ->
                "pgcdc: the initial snapshot of slot "
                    + slot
                    + " is complete already ("
                    + checkpoints.location()
                    + "): nothing is left to do with --snapshot initial-only; to stream the"
                    + " changes after it, run without --snapshot initial-only")
        .orElse(null);
  }

  /**
   * With a metrics port, the store's load and store calls are timed (datum.cdc.checkpoint.store).
   */
  private CdcCheckpointStore timed(CdcCheckpointStore opened, MetricsEndpoint endpoint) {
    return endpoint == null
        ? opened
        : TimedCheckpointStore.of(
            opened, endpoint.registry(), Tags.of("slot", slot, "publication", publication));
  }

  /** The outermost directory of {@code dir} that does not exist yet, or null. */
  private static Path firstMissing(Path dir) {
    Path missing = null;
    for (Path p = dir; p != null && !Files.exists(p); p = p.getParent()) {
      missing = p;
    }
    return missing;
  }

  /**
   * Deletes the directories a failed start created for a {@code file:} store, if they hold nothing
   * but the store's lock file.
   */
  private void removeIfEmpty(Path created, Exception failure) {
    if (created == null) {
      return;
    }
    Path dir = StoreUris.fileStoreDirectory(store);
    try {
      Files.deleteIfExists(dir.resolve(".lock"));
      for (Path p = dir; p != null && p.startsWith(created); p = p.getParent()) {
        try (var entries = Files.list(p)) {
          if (entries.findAny().isPresent()) {
            return;
          }
        }
        Files.delete(p);
      }
    } catch (IOException e) {
      failure.addSuppressed(e);
    }
  }

  private static PgLsn parseLsn(String text) {
    try {
      return PgLsn.parse(text);
    } catch (IllegalArgumentException e) {
      throw new CdcConfigurationException(
          "--stop-at-lsn must be an LSN such as 0/16B37A0, or current, was \"" + text + '"');
    }
  }

  /** The default output: lines held until a flush at a line end, then written to stdout. */
  private static StreamSession.Output heldStdout() {
    HeldOutput held = new HeldOutput(new FileOutputStream(FileDescriptor.out));
    return StreamSession.stdout(new JsonLinesWriter(held), held::held);
  }

  private static JsonLinesWriter stdout() {
    return new JsonLinesWriter(
        new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16));
  }

  /**
   * An event is acknowledged once stdout accepted its line: into a pipe, that is before anyone read
   * it. Said once at start where the platform shows what stdout is (Linux).
   */
  private static void warnIfStdoutIsAPipe() {
    Path fd = Path.of("/proc/self/fd/1");
    try {
      if (Files.isSymbolicLink(fd) && Files.readSymbolicLink(fd).toString().startsWith("pipe:")) {
        LOG.warn(
            "stdout is a pipe: an event is acknowledged once the pipe accepted its line, before"
                + " the reader read it (a reader that stops early or dies loses up to 64 KiB of"
                + " lines); use --acks-from to let the reader acknowledge, or --output FILE");
      }
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      LOG.debug("cannot tell what stdout is: {}", e.toString());
    }
  }
}
