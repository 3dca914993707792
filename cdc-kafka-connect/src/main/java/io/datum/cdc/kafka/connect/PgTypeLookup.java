package io.datum.cdc.kafka.connect;

import io.datum.cdc.event.TableId;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.errors.ConnectException;

/**
 * A {@link TypeLookup} that asks {@code pg_type} over JDBC (PostgreSQL 14 or later: {@code
 * typsubscript}). One query per oid not yet known; what it finds is cached for the life of the
 * lookup. An oid the catalog does not hold is not cached, so that it is asked again when next
 * needed (which, as schemas are cached per column list, is at most once per new column list).
 * Thread-safe.
 */
final class PgTypeLookup implements TypeLookup {

  /** Opens a connection for one query; the lookup closes it afterwards. */
  @FunctionalInterface
  interface ConnectionSource {
    /**
     * Opens a connection.
     *
     * @return an open connection to the source database
     * @throws SQLException if connecting fails
     */
    Connection open() throws SQLException;
  }

  private static final String QUERY =
      "SELECT n.nspname, t.typname, t.typtype, t.typbasetype::int8, t.typtypmod,"
          + " CASE WHEN t.typsubscript::oid = 'array_subscript_handler'::regproc::oid"
          + " THEN t.typelem ELSE 0 END::int8,"
          + " (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e"
          + "  WHERE e.enumtypid = t.oid)"
          + " FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.oid = ?::oid";

  private static final String PRIMARY_KEY_QUERY =
      "SELECT a.attname FROM pg_index i"
          + " JOIN pg_class c ON c.oid = i.indrelid"
          + " JOIN pg_namespace n ON n.oid = c.relnamespace"
          + " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)"
          + " WHERE n.nspname = ? AND c.relname = ? AND i.indisprimary"
          + " ORDER BY array_position(i.indkey::int2[], a.attnum)";

  private static final String DIMENSIONS_QUERY =
      "SELECT a.attname, a.attndims FROM pg_attribute a"
          + " JOIN pg_class c ON c.oid = a.attrelid"
          + " JOIN pg_namespace n ON n.oid = c.relnamespace"
          + " WHERE n.nspname = ? AND c.relname = ? AND a.attnum > 0 AND NOT a.attisdropped"
          + " AND a.attndims > 1";

  private final ConnectionSource connections;
  private final boolean closeAfterQuery;
  private final Map<Integer, UserType> cache = new ConcurrentHashMap<>();

  /**
   * A lookup that opens a connection per query and closes it after.
   *
   * @param connections opens connections, not null
   * @throws NullPointerException if {@code connections} is null
   */
  PgTypeLookup(ConnectionSource connections) {
    this.connections = Objects.requireNonNull(connections, "connections");
    this.closeAfterQuery = true;
  }

  /**
   * A lookup that queries over one connection it borrows (and never closes).
   *
   * @param connection an open connection, not null; used by one thread at a time
   * @throws NullPointerException if {@code connection} is null
   */
  PgTypeLookup(Connection connection) {
    Objects.requireNonNull(connection, "connection");
    this.connections = () -> connection;
    this.closeAfterQuery = false;
  }

  /**
   * {@inheritDoc}
   *
   * @throws ConnectException if the query fails, naming the oid
   */
  @Override
  public UserType type(int oid) {
    UserType known = cache.get(oid);
    if (known != null) {
      return known;
    }
    UserType found = query(oid);
    if (found != null) {
      cache.put(oid, found);
    }
    return found;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Asks {@code pg_index} for the table's primary key ({@code indisprimary}) each time; the
   * caller asks once per new column list.
   *
   * @throws ConnectException if the query fails, naming the table
   */
  @Override
  public List<String> primaryKey(TableId table) {
    Connection c = null;
    try {
      c = connections.open();
      try (PreparedStatement st = c.prepareStatement(PRIMARY_KEY_QUERY)) {
        st.setString(1, table.schema());
        st.setString(2, table.table());
        List<String> names = new ArrayList<>();
        try (ResultSet rs = st.executeQuery()) {
          while (rs.next()) {
            names.add(rs.getString(1));
          }
        }
        return List.copyOf(names);
      }
    } catch (SQLException e) {
      throw new ConnectException(
          "cannot read the primary key of " + table + " from pg_index: " + e.getMessage(), e);
    } finally {
      close(c);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Asks {@code pg_attribute} each time; the caller asks once per new column list.
   *
   * @throws ConnectException if the query fails, naming the table
   */
  @Override
  public Map<String, Integer> arrayDimensions(TableId table) {
    Connection c = null;
    try {
      c = connections.open();
      try (PreparedStatement st = c.prepareStatement(DIMENSIONS_QUERY)) {
        st.setString(1, table.schema());
        st.setString(2, table.table());
        Map<String, Integer> dimensions = new HashMap<>();
        try (ResultSet rs = st.executeQuery()) {
          while (rs.next()) {
            dimensions.put(rs.getString(1), rs.getInt(2));
          }
        }
        return Map.copyOf(dimensions);
      }
    } catch (SQLException e) {
      throw new ConnectException(
          "cannot read the array dimensions of " + table + " from pg_attribute: " + e.getMessage(),
          e);
    } finally {
      close(c);
    }
  }

  /** Closes a connection this lookup opened; a borrowed one stays open. */
  private void close(Connection c) {
    if (closeAfterQuery && c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // the query's outcome stands
      }
    }
  }

  /**
   * Queries {@code pg_type} for one oid.
   *
   * @return the type, or null if the catalog does not hold it
   */
  private UserType query(int oid) {
    Connection c = null;
    try {
      c = connections.open();
      try (PreparedStatement st = c.prepareStatement(QUERY)) {
        st.setLong(1, Integer.toUnsignedLong(oid));
        try (ResultSet rs = st.executeQuery()) {
          if (!rs.next()) {
            return null;
          }
          Array labels = rs.getArray(7);
          List<String> enumLabels =
              labels == null ? List.of() : Arrays.asList((String[]) labels.getArray());
          return new UserType(
              oid,
              rs.getString(1),
              rs.getString(2),
              rs.getString(3).charAt(0),
              (int) rs.getLong(4),
              rs.getInt(5),
              (int) rs.getLong(6),
              enumLabels);
        }
      }
    } catch (SQLException e) {
      throw new ConnectException(
          "cannot read type oid "
              + Integer.toUnsignedString(oid)
              + " from pg_type: "
              + e.getMessage()
              + " (SQLSTATE "
              + e.getSQLState()
              + ")",
          e);
    } finally {
      close(c);
    }
  }
}
