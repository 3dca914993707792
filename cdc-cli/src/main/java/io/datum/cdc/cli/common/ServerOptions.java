package io.datum.cdc.cli.common;

import io.datum.cdc.CdcConfigurationException;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * The options of every command that connects to PostgreSQL: {@code --url}, {@code --user}, {@code
 * --password-env}, {@code --password-file}, shared as a picocli mixin.
 */
public final class ServerOptions {

  @Option(
      names = "--url",
      required = true,
      description = "JDBC URL, jdbc:postgresql://host:port/db")
  private String url;

  @Option(
      names = "--user",
      description = "role to connect as (stream: one with the REPLICATION attribute)")
  private String user;

  @Option(
      names = "--password-env",
      paramLabel = "VAR",
      description = "name of the environment variable holding the password")
  private String passwordEnv;

  @Option(
      names = "--password-file",
      paramLabel = "FILE",
      description =
          "file holding the password (its first line; a Kubernetes or Docker secret file);"
              + " without a password pgjdbc reads ~/.pgpass or PGPASSFILE")
  private java.nio.file.Path passwordFile;

  /** Returns {@code --url}, the JDBC URL; never null once parsed. */
  public String url() {
    return url;
  }

  /** Returns {@code --user}, or null when not given. */
  public String user() {
    return user;
  }

  /**
   * Returns the password: the first line of {@code --password-file}, or the environment variable
   * {@code --password-env} names.
   *
   * @return the password, or null without either
   * @throws CdcConfigurationException if the variable is not set, the file cannot be read, or both
   *     are given
   */
  public String password() {
    if (passwordEnv != null && passwordFile != null) {
      throw new CdcConfigurationException(
          "--password-env and --password-file exclude each other: give the password once");
    }
    if (passwordFile != null) {
      try {
        String text = java.nio.file.Files.readString(passwordFile);
        int end = text.indexOf('\n');
        String line = end < 0 ? text : text.substring(0, end);
        line = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
        if (line.isEmpty()) {
          throw new CdcConfigurationException(
              "--password-file "
                  + passwordFile
                  + ": its first line, the password, is empty"
                  + (text.isEmpty() ? " (the file is empty)" : ""));
        }
        return line;
      } catch (java.io.IOException e) {
        throw new CdcConfigurationException(
            "--password-file " + passwordFile + ": cannot read it (" + e + ")", e);
      }
    }
    if (passwordEnv == null) {
      return null;
    }
    String password = System.getenv(passwordEnv);
    if (password == null) {
      throw new CdcConfigurationException(
          "environment variable " + passwordEnv + " (--password-env) is not set");
    }
    return password;
  }

  /**
   * Returns the JDBC connection properties: {@code user} and {@code password} when given.
   *
   * @return new properties
   * @throws CdcConfigurationException if {@code --password-env} names an unset variable, or the
   *     URL's {@code user} or {@code password} parameter differs from {@code --user} or the
   *     password (pgjdbc would let the URL's win, silently connecting as another role)
   */
  public Properties properties() {
    Properties properties = new Properties();
    if (user != null) {
      properties.setProperty("user", user);
    }
    String password = password();
    if (password != null) {
      properties.setProperty("password", password);
    }
    Properties inUrl = urlProperties();
    for (String name : new String[] {"user", "password"}) {
      String given = inUrl.getProperty(name);
      if (given != null
          && properties.containsKey(name)
          && !given.equals(properties.getProperty(name))) {
        throw new CdcConfigurationException(
            "the --url's "
                + name
                + " parameter differs from --"
                + (name.equals("user") ? "user" : "password-env/--password-file")
                + "; give it once");
      }
    }
    return properties;
  }

  /** The URL's own parameters, as the driver reads them (without the properties given apart). */
  private Properties urlProperties() {
    Properties inUrl = new Properties();
    try {
      for (DriverPropertyInfo p :
          DriverManager.getDriver(url).getPropertyInfo(url, new Properties())) {
        if (p.value != null) {
          inUrl.setProperty(p.name, p.value);
        }
      }
    } catch (SQLException e) {
      throw new CdcConfigurationException(
          "--url must be a JDBC URL such as jdbc:postgresql://host:5432/db, was \""
              + redactedUrl()
              + "\": "
              + e.getMessage());
    }
    return inUrl;
  }

  /** Returns the URL with a {@code password} parameter's value replaced by {@code ***}. */
  public String redactedUrl() {
    return url.replaceAll("(?i)password=[^&]*", "password=***");
  }
}
