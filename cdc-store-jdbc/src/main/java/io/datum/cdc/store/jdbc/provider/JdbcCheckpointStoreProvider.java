package io.datum.cdc.store.jdbc.provider;

import com.google.auto.service.AutoService;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStoreProvider;
import io.datum.cdc.store.jdbc.JdbcCheckpointStore;
import java.io.PrintWriter;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Provides {@code jdbc:} stores. The URI is a JDBC URL, given to {@link DriverManager} as it is,
 * with an optional fragment of parameters for the store: {@code
 * jdbc:postgresql://db.example.com/app?user=cdc&password=secret#table=cdc_checkpoint&create=false}.
 * {@code table} (default {@code cdc_checkpoint}) is a plain, optionally schema-qualified SQL
 * identifier; {@code create=true|false} (default true) creates the table if it is missing; {@code
 * password-env=NAME} takes the password from that environment variable, so it is in neither the URI
 * nor the process list (pgjdbc also reads {@code ~/.pgpass} or {@code PGPASSFILE} when no password
 * is given). The driver must be on the class path. Not API; use {@link
 * io.datum.cdc.CheckpointStores#open(URI)} or {@link JdbcCheckpointStore#builder}.
 */
@AutoService(CheckpointStoreProvider.class)
public final class JdbcCheckpointStoreProvider implements CheckpointStoreProvider {

  private static final String KNOWN =
      "known fragment parameters: table=<name> (default cdc_checkpoint), create=true|false"
          + " (default true), password-env=<environment variable holding the password>";

  /** Called by {@link java.util.ServiceLoader}. */
  public JdbcCheckpointStoreProvider() {}

  /** Returns {@code jdbc}. */
  @Override
  public String scheme() {
    return "jdbc";
  }

  /** Returns a one-line description of the URI form. */
  @Override
  public String description() {
    return "jdbc:postgresql://host/db?user=u[#table=cdc_checkpoint&create=true|false"
        + "&password-env=VAR] - one row per"
        + " slot in a table of the application's database (cdc-store-jdbc)";
  }

  /**
   * Opens a {@link JdbcCheckpointStore} on the database the URL names.
   *
   * @param uri a {@code jdbc:} URL, optionally with a fragment of store parameters
   * @return the open store
   * @throws CdcConfigurationException quoting the URI (password hidden) if it is not of that form,
   *     or has an unknown, repeated or bad parameter
   * @throws io.datum.cdc.CdcStoreException as {@link JdbcCheckpointStore.Builder#open()}
   */
  @Override
  public CdcCheckpointStore open(URI uri) {
    if (uri == null || uri.getScheme() == null || !uri.getScheme().equalsIgnoreCase("jdbc")) {
      throw new CdcConfigurationException("not a jdbc: checkpoint store URI: " + hide(uri));
    }
    String url = "jdbc:" + uri.getRawSchemeSpecificPart();
    String fragment = uri.getFragment();
    String passwordEnv = null;
    String table = null;
    Boolean create = null;
    if (fragment != null && !fragment.isEmpty()) {
      for (String parameter : fragment.split("&", -1)) {
        int equals = parameter.indexOf('=');
        String name = equals < 0 ? parameter : parameter.substring(0, equals);
        String value = equals < 0 ? "" : parameter.substring(equals + 1);
        if (name.equals("table") && table == null) {
          table = value;
        } else if (name.equals("create") && create == null) {
          if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw invalid(uri, "create must be true or false, was \"" + value + "\"");
          }
          create = Boolean.parseBoolean(value);
        } else if (name.equals("password-env") && passwordEnv == null) {
          passwordEnv = value;
        } else {
          throw invalid(uri, "unknown or repeated parameter \"" + name + "\"");
        }
      }
    }
    String password = null;
    if (passwordEnv != null) {
      password = System.getenv(passwordEnv);
      if (passwordEnv.isEmpty() || password == null) {
        throw invalid(
            uri, "password-env names the environment variable \"" + passwordEnv + "\", not set");
      }
    }
    JdbcCheckpointStore.Builder builder =
        JdbcCheckpointStore.builder(new UrlDataSource(url, password));
    if (table != null) {
      builder.table(table);
    }
    if (create != null) {
      builder.createTable(create);
    }
    return builder.open();
  }

  private static CdcConfigurationException invalid(URI uri, String why) {
    return new CdcConfigurationException(
        "invalid jdbc checkpoint store URI \"" + hide(uri) + "\": " + why + "; " + KNOWN);
  }

  private static String hide(URI uri) {
    return uri == null ? "null" : uri.toString().replaceAll("(?i)password=[^&;#]*", "password=***");
  }

  /**
   * A data source of {@link DriverManager} connections to one URL; with a password from the
   * environment, given as the {@code password} property (never in the URL).
   */
  private record UrlDataSource(String url, String password) implements DataSource {

    @Override
    public Connection getConnection() throws SQLException {
      if (password == null) {
        return DriverManager.getConnection(url);
      }
      java.util.Properties p = new java.util.Properties();
      p.setProperty("password", password);
      return DriverManager.getConnection(url, p);
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return DriverManager.getConnection(url, user, password);
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() {
      return Logger.getLogger("io.datum.cdc.store.jdbc");
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
      return false;
    }

    @Override
    public String toString() {
      return JdbcCheckpointStore.class.getSimpleName() + " data source";
    }
  }
}
