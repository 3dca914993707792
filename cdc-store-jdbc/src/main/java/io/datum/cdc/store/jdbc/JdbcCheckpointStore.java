package io.datum.cdc.store.jdbc;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointTable;
import io.datum.cdc.TableId;
import io.datum.cdc.spi.AbstractCheckpointStore;
import io.datum.cdc.spi.CheckpointCodec;
import io.datum.cdc.store.jdbc.internal.AdvisoryLock;
import io.datum.cdc.store.jdbc.internal.CheckpointUnion;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A {@link io.datum.cdc.CdcCheckpointStore} that keeps one row per slot in a table of a JDBC
 * database, the checkpoint in {@link CheckpointCodec}'s bytes, so checkpoints live in the
 * application's own database and can be committed in the handler's own transaction ({@link
 * TransactionalCheckpoints}).
 *
 * <p>The table ({@link #ddl(String)}; created on open unless {@link Builder#createTable(boolean)}
 * is false):
 *
 * <pre>
 * CREATE TABLE IF NOT EXISTS cdc_checkpoint (
 *   slot       varchar(63) PRIMARY KEY,
 *   checkpoint bytea,                 -- CheckpointCodec's bytes; null: nothing stored yet
 *   updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP)
 * </pre>
 *
 * <p><b>Durability.</b> A {@link #store} commits one transaction per batch of concurrent calls; it
 * is durable when the database's commit is ({@code synchronous_commit = on}, PostgreSQL's default,
 * survives a crash of the server and a power loss).
 *
 * <p><b>Exclusivity.</b> The store's own connection holds a PostgreSQL session-level advisory lock
 * keyed by the table's name while the store is open: a second store on the same table, in this JVM
 * or another process, fails to open with a {@link CdcStoreException} naming the table and the
 * holding backend (pid, {@code application_name}, client address). PostgreSQL drops the lock when
 * the session ends, also when the holding process is killed, so a crash leaves no stale lock. An
 * advisory lock was chosen over a lock row ({@code SELECT ... FOR UPDATE NOWAIT}) because holding a
 * row lock needs a transaction open for the store's lifetime, which holds back vacuum's horizon and
 * would block the handlers' own transactional writes to the row. Applications sharing one database
 * use one table each (or one schema each).
 *
 * <p><b>Databases.</b> The SQL is standard but for the lock, which is PostgreSQL's: this version
 * opens on PostgreSQL only and refuses other databases with a {@link CdcConfigurationException}.
 * The driver is the application's (a test dependency of this module only).
 *
 * <p>The store's connection is one session taken from the data source for the life of the store; if
 * it breaks, stores fail with {@link CdcStoreException} (the lock went with it) and the store must
 * be reopened. Thread-safe.
 */
public final class JdbcCheckpointStore extends AbstractCheckpointStore {

  /** The default table name. */
  public static final String DEFAULT_TABLE = "cdc_checkpoint";

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  private final Connection db; // synchronized on itself: one statement at a time
  private final String table;
  private final long lockKey;
  private final String location;
  private final Set<String> rowsCreated = ConcurrentHashMap.newKeySet();
  private final CheckpointTable identity;
  private volatile boolean released;

  private JdbcCheckpointStore(
      Connection db, String table, long lockKey, String location, CheckpointTable identity) {
    super(location, null); // no StoreLock: the advisory lock excludes other stores
    this.db = db;
    this.table = table;
    this.lockKey = lockKey;
    this.location = location;
    this.identity = identity;
  }

  /**
   * Starts a builder.
   *
   * @param dataSource where the table lives; the store takes one connection from it for its life
   * @return a builder for the table {@value #DEFAULT_TABLE}, created if missing
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static Builder builder(DataSource dataSource) {
    return new Builder(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * Returns the PostgreSQL DDL of a checkpoint table, for applications that create their schema
   * themselves (Flyway, Liquibase) and open the store with {@code createTable(false)}.
   *
   * @param table a table name, optionally schema-qualified, such as {@code app.cdc_checkpoint}
   * @return one {@code CREATE TABLE IF NOT EXISTS} statement, without a semicolon
   * @throws CdcConfigurationException if the name is not a plain SQL identifier ({@code
   *     [a-z_][a-z0-9_]*}, at most 63 characters, each part)
   */
  public static String ddl(String table) {
    return "CREATE TABLE IF NOT EXISTS "
        + checkTable(table)
        + " (slot varchar(63) PRIMARY KEY, checkpoint bytea,"
        + " updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP)";
  }

  /**
   * Returns a view of this store for acknowledging in the handler's own transactions; give the
   * view, not this store, to the source. See {@link TransactionalCheckpoints}.
   *
   * @return a new view; closing it closes this store
   */
  public TransactionalCheckpoints transactional() {
    return new TransactionalCheckpoints(this);
  }

  /**
   * Returns the table and the identity of its database ({@code pg_control_system()}'s {@code
   * system_identifier}, {@code current_database()}), read at open, so that a source decoding this
   * database leaves the store's own writes out. The system identifier is null when the role may not
   * read {@code pg_control_system()} (a DBA revoked it from PUBLIC): the source then cannot prove
   * the table is its store's, delivers its changes and says so.
   */
  @Override
  public Optional<CheckpointTable> checkpointTable() {
    return Optional.of(identity);
  }

  /**
   * Returns the table this store keeps its rows in.
   *
   * @return the table name as given to the builder, lower case
   */
  public String table() {
    return table;
  }

  @Override
  protected byte[] read(String slot) throws SQLException {
    synchronized (db) {
      try (PreparedStatement ps =
          db.prepareStatement("SELECT checkpoint FROM " + table + " WHERE slot = ?")) {
        ps.setString(1, slot);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getBytes(1) : null;
        }
      }
    }
  }

  @Override
  protected void write(Map<String, byte[]> batch) throws SQLException {
    synchronized (db) {
      inTransaction(
          () -> {
            for (Map.Entry<String, byte[]> e : batch.entrySet()) {
              upsert(db, e.getKey(), e.getValue());
            }
          });
      rowsCreated.addAll(batch.keySet());
    }
  }

  @Override
  protected List<String> list() throws SQLException {
    synchronized (db) {
      List<String> slots = new ArrayList<>();
      try (Statement st = db.createStatement();
          ResultSet rs =
              st.executeQuery("SELECT slot FROM " + table + " WHERE checkpoint IS NOT NULL")) {
        while (rs.next()) {
          slots.add(rs.getString(1));
        }
      }
      return slots;
    }
  }

  @Override
  protected void release() throws SQLException {
    released = true;
    synchronized (db) {
      // unlock first: the server drops a session's locks only when its backend exits, some
      // time after the client closed, so a store reopened at once could still find it held
      try {
        AdvisoryLock.release(db, lockKey);
      } finally {
        db.close();
      }
    }
  }

  /** Returns the table and database, without a password. */
  @Override
  public String location() {
    return location;
  }

  /**
   * Merges {@code checkpoint} into the slot's row on the store's connection, in one transaction
   * under the row's lock: the row afterwards holds every acknowledgement of either.
   */
  void merge(CdcCheckpoint checkpoint) {
    if (released) {
      throw new IllegalStateException(location + " is closed");
    }
    String slot = checkpoint.slot();
    synchronized (db) {
      try {
        ensureRow(slot);
        inTransaction(
            () -> {
              try (Statement st = db.createStatement()) {
                // a handler's transaction holding the row does not block the source for ever
                st.execute("SET LOCAL lock_timeout = '" + MERGE_LOCK_TIMEOUT_SECONDS + "s'");
              }
              byte[] row = lockRow(db, slot);
              CheckpointUnion union = new CheckpointUnion(slot);
              if (row != null) {
                union.add(CheckpointCodec.decode(row, slot, location));
              }
              union.add(checkpoint);
              update(db, slot, CheckpointCodec.encode(union.toCheckpoint()));
            });
      } catch (SQLException e) {
        if ("55P03".equals(e.getSQLState())) { // lock_not_available: the lock_timeout passed
          throw new CdcStoreException(
              "cannot store the checkpoint of slot \""
                  + slot
                  + "\" in "
                  + location
                  + ": its row stayed locked for "
                  + MERGE_LOCK_TIMEOUT_SECONDS
                  + " s by another transaction (a handler's, between acknowledgeIn and its commit;"
                  + " acknowledging through the source's handle there waits for that transaction,"
                  + " which waits for the handler: commit or roll back first)",
              e);
        }
        throw new CdcStoreException(
            "cannot store the checkpoint of slot \"" + slot + "\" in " + location + ": " + e, e);
      }
    }
  }

  /** Seconds the source's own merge waits for the slot's row lock before it fails. */
  static final int MERGE_LOCK_TIMEOUT_SECONDS = 30;

  /** Inserts an empty row for the slot once, so that transactions can lock it. */
  void ensureRow(String slot) throws SQLException {
    if (rowsCreated.contains(slot)) {
      return;
    }
    synchronized (db) {
      inTransaction(
          () -> {
            if (!exists(slot)) {
              try (PreparedStatement ps =
                  db.prepareStatement("INSERT INTO " + table + " (slot) VALUES (?)")) {
                ps.setString(1, slot);
                ps.executeUpdate();
              }
            }
          });
    }
    rowsCreated.add(slot);
  }

  /**
   * Makes sure the slot has a row, in the caller's transaction, without the store's connection (so
   * a handler's transaction never waits for the store's monitor while a store write waits for its
   * row lock): {@code INSERT ... ON CONFLICT DO NOTHING} until the store saw the row committed.
   */
  void ensureRowIn(Connection connection, String slot) throws SQLException {
    if (rowsCreated.contains(slot)) {
      return;
    }
    try (PreparedStatement ps =
        connection.prepareStatement(
            "INSERT INTO " + table + " (slot) VALUES (?) ON CONFLICT (slot) DO NOTHING")) {
      ps.setString(1, slot);
      ps.executeUpdate();
    }
  }

  /**
   * Reads the slot's row in the caller's transaction and locks it until that transaction ends.
   *
   * @return the row's bytes, or null if it holds none
   */
  byte[] lockRow(Connection connection, String slot) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT checkpoint FROM " + table + " WHERE slot = ? FOR UPDATE")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("the row of slot \"" + slot + "\" in " + table + " is missing");
        }
        return rs.getBytes(1);
      }
    }
  }

  /** Updates the slot's existing row in the caller's transaction. */
  void update(Connection connection, String slot, byte[] value) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "UPDATE "
                + table
                + " SET checkpoint = ?, updated_at = CURRENT_TIMESTAMP WHERE slot = ?")) {
      ps.setBytes(1, value);
      ps.setString(2, slot);
      if (ps.executeUpdate() != 1) {
        throw new SQLException("the row of slot \"" + slot + "\" in " + table + " is missing");
      }
    }
  }

  /** Returns the location, for messages of the view. */
  String where() {
    return location;
  }

  private boolean exists(String slot) throws SQLException {
    try (PreparedStatement ps = db.prepareStatement("SELECT 1 FROM " + table + " WHERE slot = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private void upsert(Connection connection, String slot, byte[] value) throws SQLException {
    // UPDATE, else INSERT: portable, and race-free since only the lock holder writes this way
    try (PreparedStatement ps =
        connection.prepareStatement(
            "UPDATE "
                + table
                + " SET checkpoint = ?, updated_at = CURRENT_TIMESTAMP WHERE slot = ?")) {
      ps.setBytes(1, value);
      ps.setString(2, slot);
      if (ps.executeUpdate() == 1) {
        return;
      }
    }
    try (PreparedStatement ps =
        connection.prepareStatement("INSERT INTO " + table + " (slot, checkpoint) VALUES (?, ?)")) {
      ps.setString(1, slot);
      ps.setBytes(2, value);
      ps.executeUpdate();
    }
  }

  private interface SqlWork {
    void run() throws SQLException;
  }

  /**
   * Runs {@code work} in one transaction of the store's connection; the caller holds {@code db}.
   */
  private void inTransaction(SqlWork work) throws SQLException {
    db.setAutoCommit(false);
    try {
      work.run();
      db.commit();
    } catch (SQLException | RuntimeException e) {
      try {
        db.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    } finally {
      db.setAutoCommit(true);
    }
  }

  private static String checkTable(String table) {
    Objects.requireNonNull(table, "table");
    String lower = table.toLowerCase(Locale.ROOT);
    String[] parts = lower.split("\\.", -1);
    if (parts.length > 2
        || !IDENTIFIER.matcher(parts[0]).matches()
        || (parts.length == 2 && !IDENTIFIER.matcher(parts[1]).matches())) {
      throw new CdcConfigurationException(
          "checkpoint table name \""
              + table
              + "\" must be a plain SQL identifier ([a-z_][a-z0-9_]*, at most 63 characters),"
              + " optionally schema-qualified");
    }
    return lower;
  }

  /** Removes {@code password=...} from a JDBC URL, for messages. */
  static String withoutPassword(String url) {
    return url == null ? "unknown database" : url.replaceAll("(?i)password=[^&;]*", "password=***");
  }

  /**
   * Builds a {@link JdbcCheckpointStore}. Not thread-safe; {@link #open()} may be called more than
   * once.
   */
  public static final class Builder {

    private final DataSource dataSource;
    private String table = DEFAULT_TABLE;
    private boolean createTable = true;

    private Builder(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    /**
     * Sets the table.
     *
     * @param table a plain SQL identifier, optionally schema-qualified ({@code
     *     app.cdc_checkpoint}); default {@value JdbcCheckpointStore#DEFAULT_TABLE}
     * @return this builder
     * @throws CdcConfigurationException if the name is not such an identifier
     * @throws NullPointerException if {@code table} is null
     */
    public Builder table(String table) {
      this.table = checkTable(table);
      return this;
    }

    /**
     * Sets whether {@link #open()} creates the table if it is missing.
     *
     * @param create true (the default) to run {@link JdbcCheckpointStore#ddl(String)} on open;
     *     false if the application's migrations create it
     * @return this builder
     */
    public Builder createTable(boolean create) {
      this.createTable = create;
      return this;
    }

    /**
     * Opens the store: takes a connection, checks the database, takes the advisory lock, creates
     * the table if asked to.
     *
     * @return the open store; the caller closes it
     * @throws CdcConfigurationException if the database is not PostgreSQL, the login fails
     *     (SQLSTATE class 28, or no password given) or the database does not exist
     * @throws CdcStoreException naming the table and database if another store holds the table (and
     *     which backend does), or the connection, the lock or the DDL fails
     */
    public JdbcCheckpointStore open() {
      String location = "jdbc checkpoint store, table " + table;
      Connection db;
      try {
        db = dataSource.getConnection();
      } catch (SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        if (state.startsWith("28") || state.equals("08004") || state.equals("3D000")) {
          // authentication (class 28; pgjdbc's 08004 when no password was given) or a missing
          // database: retrying cannot fix either
          throw new CdcConfigurationException(
              "cannot connect to the database of "
                  + location
                  + ": "
                  + e.getMessage()
                  + " [SQLSTATE "
                  + state
                  + "]: check the user and database in the store's URI, and its password"
                  + " (#password-env=VAR in the URI's fragment, password= in its query, or a"
                  + " .pgpass file)",
              e);
        }
        throw new CdcStoreException("cannot connect to the database of " + location + ": " + e, e);
      }
      try {
        location += " at " + withoutPassword(db.getMetaData().getURL());
        String product = db.getMetaData().getDatabaseProductName();
        if (!"PostgreSQL".equalsIgnoreCase(product)) {
          throw new CdcConfigurationException(
              location
                  + ": the database is "
                  + product
                  + "; this version of cdc-store-jdbc supports PostgreSQL only (its lock is a"
                  + " PostgreSQL advisory lock)");
        }
        db.setAutoCommit(true);
        try (PreparedStatement ps =
            db.prepareStatement(
                "SELECT set_config('application_name', ?, false)"
                    + " WHERE current_setting('application_name') IN ('', 'PostgreSQL JDBC Driver')")) {
          // the holder a second store's error names is findable in pg_stat_activity
          ps.setString(1, "datum-cdc checkpoint store " + table);
          ps.executeQuery().close();
        }
        if (createTable && !exists(db, table)) {
          // two stores creating the same table at once: one waits for the other's DDL
          long ddlKey = AdvisoryLock.key("ddl " + table);
          AdvisoryLock.lockWaiting(db, ddlKey);
          try (Statement st = db.createStatement()) {
            st.execute(ddl(table));
          } catch (SQLException e) {
            if ("42501".equals(e.getSQLState())) {
              throw new CdcStoreException(
                  location
                      + ": the table "
                      + table
                      + " does not exist and the role "
                      + db.getMetaData().getUserName()
                      + " may not create it ("
                      + e.getMessage()
                      + " [SQLSTATE 42501]): GRANT CREATE ON SCHEMA to it, or create the table as"
                      + " another role ("
                      + ddl(table)
                      + ", then GRANT SELECT, INSERT, UPDATE, DELETE ON it) and open the store"
                      + " with #create=false (createTable(false))",
                  e);
            }
            throw e;
          } finally {
            AdvisoryLock.release(db, ddlKey);
          }
        }
        // the lock names the table itself (its oid), not the name as written: public.t and t, or
        // the same name in two schemas through search_path, are told apart right
        long oid = tableOid(db, table, location);
        long key = AdvisoryLock.key("oid " + oid);
        AdvisoryLock.acquire(db, key, location);
        try {
          checkTableUsable(db, table, oid, location);
        } catch (SQLException | RuntimeException e) {
          AdvisoryLock.release(db, key);
          throw e;
        }
        return new JdbcCheckpointStore(db, table, key, location, identify(db, oid));
      } catch (SQLException | RuntimeException e) {
        try {
          db.close();
        } catch (SQLException suppressed) {
          e.addSuppressed(suppressed);
        }
        if (e instanceof RuntimeException r) {
          throw r;
        }
        throw new CdcStoreException("cannot open " + location + ": " + e, e);
      }
    }

    /**
     * The table's identity for sources decoding its database ({@link #checkpointTable()}); without
     * the system identifier if {@code pg_control_system()} may not be read.
     */
    private static CheckpointTable identify(Connection db, long oid) throws SQLException {
      String schema;
      String name;
      String database;
      try (PreparedStatement ps =
          db.prepareStatement(
              "SELECT n.nspname, c.relname, current_database() FROM pg_class c"
                  + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ?::oid")) {
        ps.setLong(1, oid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          schema = rs.getString(1);
          name = rs.getString(2);
          database = rs.getString(3);
        }
      }
      try (Statement st = db.createStatement();
          ResultSet rs =
              st.executeQuery("SELECT system_identifier::text FROM pg_control_system()")) {
        rs.next();
        return new CheckpointTable(rs.getString(1), database, new TableId(schema, name));
      } catch (SQLException e) {
        if (!"42501".equals(e.getSQLState())) {
          throw e;
        }
        // a DBA revoked it from PUBLIC: the source says what it cannot prove
        return new CheckpointTable(null, database, new TableId(schema, name));
      }
    }

    /** Whether the table exists (as the role's search_path resolves its name). */
    private static boolean exists(Connection db, String table) throws SQLException {
      try (PreparedStatement ps = db.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
        ps.setString(1, table);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getBoolean(1);
        }
      }
    }

    /** The table's oid, or a CdcStoreException with the DDL if it does not exist. */
    private static long tableOid(Connection db, String table, String location) throws SQLException {
      try (PreparedStatement ps = db.prepareStatement("SELECT to_regclass(?)::oid")) {
        ps.setString(1, table);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          long oid = rs.getLong(1);
          if (rs.wasNull()) {
            throw new CdcStoreException(
                location
                    + ": the table "
                    + table
                    + " does not exist (with createTable(false), #create=false, it must be"
                    + " created beforehand: "
                    + ddl(table)
                    + ")");
          }
          return oid;
        }
      }
    }

    /**
     * Checks the table has the columns and the current role the rights the store needs, so that a
     * wrong table or a read-only role fails the open, not the first acknowledgement.
     */
    private static void checkTableUsable(Connection db, String table, long oid, String location)
        throws SQLException {
      try (Statement st = db.createStatement()) {
        st.executeQuery("SELECT slot, checkpoint, updated_at FROM " + table + " WHERE false")
            .close();
      } catch (SQLException e) {
        throw new CdcStoreException(
            location
                + ": the table "
                + table
                + " is not a checkpoint table ("
                + e.getMessage()
                + "); it needs the columns of "
                + ddl(table),
            e);
      }
      try (PreparedStatement ps =
          db.prepareStatement(
              "SELECT has_table_privilege(?::oid, 'SELECT'), has_table_privilege(?::oid, 'INSERT'),"
                  + " has_table_privilege(?::oid, 'UPDATE'), current_user")) {
        ps.setLong(1, oid);
        ps.setLong(2, oid);
        ps.setLong(3, oid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(1) || !rs.getBoolean(2) || !rs.getBoolean(3)) {
            throw new CdcStoreException(
                location
                    + ": role "
                    + rs.getString(4)
                    + " needs SELECT, INSERT and UPDATE on "
                    + table
                    + " (GRANT SELECT, INSERT, UPDATE ON "
                    + table
                    + " TO "
                    + rs.getString(4)
                    + ")");
          }
        }
      }
    }
  }
}
