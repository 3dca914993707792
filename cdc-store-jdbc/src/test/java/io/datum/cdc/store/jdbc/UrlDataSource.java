package io.datum.cdc.store.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/** A {@link DataSource} of {@link DriverManager} connections to one URL, for the tests. */
record UrlDataSource(String url) implements DataSource {

  @Override
  public Connection getConnection() throws SQLException {
    return DriverManager.getConnection(url);
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
    return Logger.getGlobal();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return false;
  }
}
