package io.datum.cdc.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.regex.Pattern;
import org.postgresql.Driver;
import org.postgresql.PGProperty;

/**
 * A PostgreSQL server for tests, demos and tools, of major version 17 by default or 14, 15, 16 or
 * 18 on request ({@link Builder#majorVersion(int)}), configured for logical replication ({@code
 * wal_level=logical}, {@code max_replication_slots=20}, {@code max_wal_senders=20}).
 *
 * <p>The server runs the PostgreSQL binaries that {@code io.zonky.test.postgres} packages in Maven
 * artifacts, with their own {@code initdb} and {@code pg_ctl}: version 17 comes with this module
 * (for the platform of the build: Linux or macOS, x86_64 or aarch64); 14, 15, 16 and 18 (Linux
 * x86_64) need a dependency on {@code io.datum.cdc:cdc-testkit-postgres-binaries}. The first start
 * of a version on a machine unpacks its binaries to {@code
 * ${java.io.tmpdir}/datum-cdc-postgres-binaries/<archive>-<version>-<hash of the archive>}, later
 * starts reuse them; versions do not share a directory. It listens on {@code localhost} and
 * authenticates every local and loopback connection, replication connections included, with {@code
 * trust}: the superuser is {@value #USER} and has no password.
 *
 * <p><b>Running as root.</b> PostgreSQL refuses to run as root. When the JVM runs as root on Linux
 * and {@code unshare -U} works, {@code initdb}, {@code pg_ctl} and so the server run inside a new
 * user namespace, where the process is unprivileged; nothing needs to be configured. Where user
 * namespaces are disabled the start fails with PostgreSQL's own message in the {@linkplain
 * #logFile() server log}.
 *
 * <p><b>Durability.</b> The server keeps PostgreSQL's durable defaults: {@code fsync=on} and {@code
 * synchronous_commit=on}, so that a committed transaction survives {@link #restart(ShutdownMode)
 * restart(IMMEDIATE)}. Override them with {@link Builder#setting(String, String)} when speed
 * matters more: with {@code fsync=off} a committed transaction still survives a crash of the server
 * (not one of the machine), and the server starts from a copy of a cluster that {@code initdb} made
 * once per machine rather than from a new {@code initdb}.
 *
 * <p><b>Lifecycle.</b> {@link #start()} starts the server, initialising the data directory the
 * first time; {@link #stop()} stops it and keeps the data directory and the port, so that a later
 * {@link #start()} or {@link #restart()} serves the same data on the same port; {@link #close()}
 * stops it for good and deletes the data directory it created. A JVM shutdown hook closes a server
 * that was not closed. A server left running by a JVM that was killed (so its hook never ran) is
 * stopped, and its temporary directory deleted, by the next JVM that starts a server with a
 * temporary directory on the machine.
 *
 * <p>The parts: {@code PostgresBinaries} finds the archive of a version on the class path, {@code
 * PostgresInstallation} unpacks it and runs {@code initdb} and {@code pg_ctl start}, {@code
 * Clusters} fills a data directory (with {@code initdb}, or a copy of a template for a server
 * without {@code fsync}), {@code Postmaster} signals and waits for the server process, {@code
 * ScratchDirectories} creates and sweeps the temporary directories, {@code Standbys} makes a
 * standby; this class is the lifecycle.
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
 * <p>Instances are thread-safe. This module has no JUnit dependency; for JUnit 5 tests see {@code
 * io.datum.cdc.testkit.EmbeddedPostgresTest} in {@code io.datum.cdc:cdc-testkit}.
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
   * otherwise: 17, the version whose binaries this module brings.
   */
  public static final int DEFAULT_MAJOR_VERSION = 17;

  /**
   * The major versions there are binaries for, ascending: 14, 15, 16, 17, 18. 17 comes with this
   * module; the others with {@code io.datum.cdc:cdc-testkit-postgres-binaries} (Linux x86_64 only).
   * Unmodifiable.
   */
  public static final List<Integer> SUPPORTED_MAJOR_VERSIONS = List.of(14, 15, 16, 17, 18);

  /**
   * The system property that, when set, makes {@link #start()} refuse to start a server, with the
   * property's value as the reason: the build sets it for the unit tests ({@code ./mvnw test}), so
   * that a test class that starts PostgreSQL without the JUnit tag {@code postgres} fails there
   * instead of slowing the inner loop down.
   */
  public static final String REFUSE_PROPERTY = "datum.cdc.embedded.refuse";

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

  private static final Pattern SETTING_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.]*");
  private static final String DATA_DIR = "data";
  private static final String LOG_FILE = "postgres.log";
  private static final System.Logger LOG = System.getLogger(EmbeddedPostgresServer.class.getName());
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
  private Postmaster postmaster;
  private boolean closed;
  private Thread shutdownHook;

  /** For a standby made by {@link #createStandby}: its primary and slot there; null otherwise. */
  private volatile EmbeddedPostgresServer upstream;

  private volatile String upstreamSlot;

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
   * initdb} (and, the first time on the machine, unpacks the PostgreSQL binaries); a server with
   * {@code fsync=off} gets a copy of a cluster that {@code initdb} made once per machine instead. A
   * later start serves the same data directory on the same port.
   *
   * @return this server, running; never {@code null}
   * @throws IllegalStateException if the server was {@linkplain #close() closed}, if the system
   *     property {@value #REFUSE_PROPERTY} is set (the message quotes it), if no binaries of its
   *     {@linkplain #majorVersion() major version} are on the class path (the message names the
   *     dependency to add), or if the data directory is of another major version than the one asked
   *     for
   * @throws UncheckedIOException if the server cannot be started within the {@linkplain
   *     Builder#startupTimeout(Duration) startup timeout}; the message quotes the end of the
   *     {@linkplain #logFile() server log}
   */
  public synchronized EmbeddedPostgresServer start() {
    ensureOpen();
    if (postmaster != null && postmaster.isAlive()) {
      return this;
    }
    postmaster = null;
    PostgresInstallation installation;
    Path dataDirectory;
    try {
      if (baseDirectory == null) {
        prepareBaseDirectory();
      }
      dataDirectory = dataDirectory();
      Files.createDirectories(dataDirectory);
      installation = PostgresInstallation.of(majorVersion);
      String refusal = System.getProperty(REFUSE_PROPERTY);
      if (refusal != null) {
        throw new IllegalStateException(
            "no embedded PostgreSQL is started here (" + REFUSE_PROPERTY + "): " + refusal);
      }
      Clusters.createIfAbsent(installation, dataDirectory, logFile(), settings);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot prepare the directory of the embedded PostgreSQL in " + baseDirectory, e);
    } catch (UncheckedIOException e) {
      throw withLogTail(e);
    }
    Clusters.checkVersion(installation, dataDirectory, majorVersion);
    try {
      if (port == 0) {
        port = freePort();
      }
      installation.start(dataDirectory, port, settings, startupTimeout, logFile());
    } catch (IOException | UncheckedIOException e) {
      // pg_ctl gave up, but the server may still be starting
      Postmaster.of(dataDirectory).ifPresent(p -> p.shutDown(ShutdownMode.IMMEDIATE, null));
      throw withLogTail(e);
    }
    postmaster =
        Postmaster.of(dataDirectory)
            .orElseThrow(
                () ->
                    withLogTail(
                        new IOException(
                            "pg_ctl started PostgreSQL in "
                                + dataDirectory
                                + " but no postmaster runs there")));
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
    return postmaster != null && postmaster.isAlive();
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
    if (postmaster == null) {
      return;
    }
    try {
      postmaster.shutDown(mode, shutdownTimeout);
    } finally {
      postmaster = null;
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
   * to the builder is kept. A standby made by {@link #createStandby(String)} and not promoted also
   * leaves its primary, if that runs, as it was: its name is taken out of the primary's {@code
   * synchronized_standby_slots} (where it would hold back the primary's failover slots for good)
   * and its physical slot is dropped (which would keep WAL for good). Calling it again does
   * nothing. Does not throw: a failure to stop, to delete or to tidy the primary is logged ({@link
   * System.Logger}, level WARNING).
   */
  @Override
  public void close() {
    Thread hook;
    synchronized (this) {
      hook = shutdownHook;
      shutdownHook = null;
    }
    closeQuietly();
    EmbeddedPostgresServer primary = upstream;
    String slot = upstreamSlot;
    upstream = null;
    if (primary != null && primary.isRunning()) {
      try {
        StandbySettings.forget(primary, slot, primary.shutdownTimeout, primary.startupTimeout);
      } catch (SQLException | RuntimeException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "cannot take standby slot " + slot + " out of " + primary + "; drop it there",
            e);
      }
    }
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

  /**
   * Creates, starts and returns a physical standby of this running server: a new server of the same
   * major version and settings on its own port and temporary directory, made from an online base
   * backup of this one (the low-level backup API; see {@code pg_basebackup -R}: the zonky archives
   * bring no {@code pg_basebackup}) and streaming from it through a physical replication slot of
   * this server. Configured for logical replication failover (PostgreSQL docs, 47.2.3 "Logical
   * Replication Failover" and 19.6.2 / 19.6.4):
   *
   * <ul>
   *   <li>on this server: the physical slot {@code physicalSlot}, created if absent ({@code
   *       pg_create_physical_replication_slot(name, true)}, reserving WAL from now on), and, on
   *       PostgreSQL 17+, {@code synchronized_standby_slots} naming it ({@code ALTER SYSTEM}, kept
   *       with the names already there; reloaded), so that a logical walsender of a failover slot
   *       sends no change before this standby has received its WAL;
   *   <li>on the standby: {@code standby.signal}, {@code primary_conninfo} ({@code host}, {@code
   *       port}, {@code user}, {@code dbname=postgres}, {@code application_name} = the slot name),
   *       {@code primary_slot_name}, {@code hot_standby_feedback = on}, and on 17+ {@code
   *       sync_replication_slots = on} (the slot sync worker copies failover slots from this
   *       server); this server's {@code synchronized_standby_slots} is left out of the standby's
   *       copy of {@code postgresql.auto.conf}, so that a promoted standby waits for no standby but
   *       those made of it later (its own {@code createStandby} names them).
   * </ul>
   *
   * <p>Returns once the standby accepts read-only connections ({@code pg_ctl start -w}). The
   * standby is an ordinary {@link EmbeddedPostgresServer}: {@link #stop()}, {@link #restart()} and
   * {@link #close()} work on it; closing it (unless it was {@linkplain #promote() promoted}) also
   * drops its physical slot here and takes it out of {@code synchronized_standby_slots}.
   *
   * @param physicalSlot the name of the physical slot the standby streams through: 1 to 63
   *     lower-case letters, digits and underscores; not {@code null}
   * @return the running standby, which the caller must {@link #close()}; never {@code null}
   * @throws IllegalArgumentException if the slot name is not valid
   * @throws IllegalStateException if this server is not running, or was closed, or (17+) its {@code
   *     synchronized_standby_slots} was given to the builder, which {@code ALTER SYSTEM} cannot
   *     override, or the reloaded setting does not name the slot within the startup timeout
   * @throws SQLException if this server refuses the slot, the backup or the settings
   * @throws UncheckedIOException if the data directory cannot be copied or the standby cannot be
   *     started; the message quotes the end of the standby's log
   */
  public EmbeddedPostgresServer createStandby(String physicalSlot) throws SQLException {
    return Standbys.create(this, physicalSlot, Map.of());
  }

  /**
   * Like {@link #createStandby(String)}, with settings of the standby's own that replace the
   * primary's and the ones {@code createStandby} sets: for example {@code hot_standby_feedback =
   * off}, with which the primary removes catalog rows a logical slot on the standby still needs
   * (the slot is then invalidated, {@code rows_removed}).
   *
   * @param physicalSlot as {@link #createStandby(String)}
   * @param standbySettings names to values, passed on the standby's command line; not {@code null}
   * @return the running standby, which the caller must {@link #close()}; never {@code null}
   * @throws IllegalArgumentException as {@link #createStandby(String)}, or if a setting's name is
   *     not a setting name
   * @throws IllegalStateException as {@link #createStandby(String)}
   * @throws SQLException as {@link #createStandby(String)}
   * @throws UncheckedIOException as {@link #createStandby(String)}
   */
  public EmbeddedPostgresServer createStandby(
      String physicalSlot, Map<String, String> standbySettings) throws SQLException {
    return Standbys.create(this, physicalSlot, Objects.requireNonNull(standbySettings));
  }

  /**
   * Promotes this server, a standby made by {@link #createStandby(String)}, to a primary: {@code
   * SELECT pg_promote(true, seconds)} (PostgreSQL docs, 9.28.5 Recovery Control Functions), which
   * returns once the promotion is complete. The server then runs on a new timeline (one above its
   * primary's, whose history file names where the old timeline ended) and accepts writes; on
   * PostgreSQL 17+ the failover slots it had synchronized ({@code pg_replication_slots.synced})
   * become usable.
   *
   * @throws SQLException if the server is not a standby ({@code recovery is not in progress}), or
   *     the promotion does not complete within the {@linkplain Builder#startupTimeout(Duration)
   *     startup timeout}
   */
  public void promote() throws SQLException {
    long seconds = Math.max(1, startupTimeout.toSeconds());
    String promoted = queryString("SELECT pg_promote(true, " + seconds + ")");
    if (!"t".equals(promoted)) {
      throw new SQLException(
          "the embedded PostgreSQL on port "
              + port()
              + " was not promoted within "
              + seconds
              + " s (pg_promote returned false); see "
              + logFile());
    }
    upstream = null; // a primary now: closing it leaves the old primary alone
  }

  /**
   * On a standby made by {@link #createStandby(String)} (PostgreSQL 17+): has its slot sync worker
   * copy the primary's failover slots now rather than after its nap. The worker naps 200 ms after a
   * cycle that changed a slot and twice as long as the last nap, up to 30 s, after one that did not
   * ({@code slotsync.c}, {@code wait_for_slot_activity}), so a slot that becomes ready to copy
   * while it naps waits up to 30 s. This logs a running-transactions record on the primary ({@code
   * pg_log_standby_snapshot()}: a logical slot there can only move its {@code restart_lsn} past
   * such a record, and the bgwriter logs one every 15 s) and reloads the standby's configuration
   * ({@code pg_reload_conf()}: the SIGHUP sets the worker's latch, which ends its nap). Call it
   * while waiting for {@code pg_replication_slots.synced}, for example in an Awaitility condition.
   *
   * @throws IllegalStateException if this server is not a standby made by {@link
   *     #createStandby(String)}, or was promoted
   * @throws SQLException if either server refuses the statement
   */
  public void hurrySlotSync() throws SQLException {
    EmbeddedPostgresServer primary = upstream;
    if (primary == null) {
      throw new IllegalStateException(
          this + " is not a standby made by createStandby, or was promoted: no slots to sync");
    }
    primary.execute("SELECT pg_log_standby_snapshot()");
    execute("SELECT pg_reload_conf()");
  }

  /**
   * On a standby made by {@link #createStandby(String)}: waits until it has replayed the WAL its
   * primary has flushed so far ({@code pg_current_wal_flush_lsn()} there, then {@code
   * pg_last_wal_replay_lsn()} here; PostgreSQL docs, 9.28.4 and 9.28.5): what the primary committed
   * before the call is visible here, and in a logical slot's stream here, once it returns. Polls
   * every 10 ms.
   *
   * @param timeout the longest wait
   * @throws IllegalStateException if this server is not a standby made by {@link
   *     #createStandby(String)}, or was promoted, or the replay did not get there in time
   * @throws SQLException if either server refuses the query
   */
  public void awaitReplay(Duration timeout) throws SQLException {
    EmbeddedPostgresServer primary = upstream;
    if (primary == null) {
      throw new IllegalStateException(
          this + " is not a standby made by createStandby, or was promoted: nothing to replay");
    }
    String flushed = primary.queryString("SELECT pg_current_wal_flush_lsn()");
    String query = "SELECT pg_last_wal_replay_lsn() >= '" + flushed + "'::pg_lsn";
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!"t".equals(queryString(query))) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            this
                + " did not replay its primary's WAL up to "
                + flushed
                + " within "
                + timeout
                + " (replayed "
                + queryString("SELECT pg_last_wal_replay_lsn()")
                + ")");
      }
      java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
    }
  }

  /** The builder's startup timeout, for {@link Standbys}. */
  Duration startupTimeout() {
    return startupTimeout;
  }

  /** The builder's shutdown timeout, for {@link Standbys}. */
  Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /**
   * Makes this server, built and not yet started, a standby of {@code primary} through {@code
   * slot}: its base directory becomes a new temporary one, and closing it (unless it is promoted)
   * takes the slot out of the primary.
   */
  void follow(EmbeddedPostgresServer primary, String slot) throws IOException {
    upstream = primary;
    upstreamSlot = slot;
    synchronized (this) {
      baseDirectory = ScratchDirectories.create(DATA_DIR);
      ownsBaseDirectory = true;
    }
  }

  @Override
  public synchronized String toString() {
    return "EmbeddedPostgresServer[version="
        + majorVersion
        + ", port="
        + port
        + ", running="
        + (postmaster != null)
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
          ScratchDirectories.deleteRecursively(baseDirectory);
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
    baseDirectory = ScratchDirectories.create(DATA_DIR);
    ownsBaseDirectory = true;
  }

  /** A port that is free now: the kernel's choice for a socket bound to port 0. */
  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }

  private UncheckedIOException withLogTail(Exception cause) {
    return Postmaster.startFailure(baseDirectory, logFile(), cause);
  }

  private static Connection connect(String url, Properties properties) throws SQLException {
    Connection connection = DRIVER.connect(url, properties);
    if (connection == null) {
      throw new SQLException("pgjdbc does not accept the URL " + url);
    }
    return connection;
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
   * wal_sender_timeout=60s}, {@code fsync=on}, {@code synchronous_commit=on}, plus {@code
   * timezone=UTC} and {@code max_connections=300}. A builder can build several servers; each gets
   * its own copy of the configuration. Not thread-safe.
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
     * EmbeddedPostgresServer#DEFAULT_MAJOR_VERSION} come with this module; those of 14, 15, 16 and
     * 18 (Linux x86_64) with a test-scope dependency on {@code
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
      all.put("timezone", "UTC");
      all.put("max_connections", "300");
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
