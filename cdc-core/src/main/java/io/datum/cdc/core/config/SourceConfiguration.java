package io.datum.cdc.core.config;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * The validated, immutable configuration of one source, as {@link
 * io.datum.cdc.core.PgCdcSource.Builder#build()} makes it and the source reads it: the value of
 * every {@link SourceOptions option} ({@link #get}), plus what is not an option but an object (the
 * checkpoint store, the flush limit, pgjdbc's connection properties).
 */
public final class SourceConfiguration {

  private final Map<SourceOption<?>, Object> values;
  private final Properties connectionProperties;
  private final CdcCheckpointStore store;
  private final Supplier<PgLsn> confirmedFlushLimit;

  private SourceConfiguration(
      Map<SourceOption<?>, Object> values,
      Properties connectionProperties,
      CdcCheckpointStore store,
      Supplier<PgLsn> confirmedFlushLimit) {
    this.values = values;
    this.connectionProperties = connectionProperties;
    this.store = store;
    this.confirmedFlushLimit = confirmedFlushLimit;
  }

  /**
   * Makes a configuration: each option given is validated again, each one not given takes its
   * default, and the options that must agree are checked together.
   *
   * @param given option values; an option absent takes its default
   * @param connectionProperties pgjdbc connection properties (user and password among them), copied
   * @param store the checkpoint store, not null
   * @param confirmedFlushLimit caps the position confirmed to PostgreSQL; null for none
   * @return the configuration
   * @throws CdcConfigurationException naming the required options that are missing, a value that
   *     fails its option's validation, or options that disagree
   */
  public static SourceConfiguration of(
      Map<SourceOption<?>, ?> given,
      Properties connectionProperties,
      CdcCheckpointStore store,
      Supplier<PgLsn> confirmedFlushLimit) {
    Map<SourceOption<?>, Object> values = new HashMap<>();
    List<String> missing = new ArrayList<>();
    for (SourceOption<?> o : SourceOptions.all()) {
      Object v = given.containsKey(o) ? given.get(o) : o.defaultValue();
      if (v == null && o.isRequired()) {
        missing.add(o.name());
      } else if (v != null) {
        values.put(o, validate(o, v));
      }
    }
    if (!missing.isEmpty()) {
      throw new CdcConfigurationException("the source needs " + String.join(", ", missing));
    }
    Properties properties = new Properties();
    properties.putAll(connectionProperties);
    SourceConfiguration c =
        new SourceConfiguration(
            values, properties, Objects.requireNonNull(store, "store"), confirmedFlushLimit);
    if (c.get(SourceOptions.RECONNECT_INITIAL_BACKOFF)
            .compareTo(c.get(SourceOptions.RECONNECT_MAX_BACKOFF))
        > 0) {
      throw new CdcConfigurationException(
          "option reconnect-initial-backoff ("
              + c.get(SourceOptions.RECONNECT_INITIAL_BACKOFF)
              + ") must not exceed reconnect-max-backoff ("
              + c.get(SourceOptions.RECONNECT_MAX_BACKOFF)
              + ")");
    }
    return c;
  }

  @SuppressWarnings("unchecked")
  private static <T> Object validate(SourceOption<T> option, Object value) {
    return option.validate((T) value);
  }

  /**
   * Returns an option's value.
   *
   * @param option the option, not null
   * @param <T> its type
   * @return the value given or the default; null only for an option without default that was not
   *     given (such as {@link SourceOptions#ORIGIN})
   */
  @SuppressWarnings("unchecked")
  public <T> T get(SourceOption<T> option) {
    return (T) values.get(option);
  }

  /** Returns the JDBC URL ({@link SourceOptions#JDBC_URL}); never null. */
  public String jdbcUrl() {
    return get(SourceOptions.JDBC_URL);
  }

  /** Returns the slot ({@link SourceOptions#SLOT}); never null. */
  public String slot() {
    return get(SourceOptions.SLOT);
  }

  /** Returns the publication ({@link SourceOptions#PUBLICATION}); never null. */
  public String publication() {
    return get(SourceOptions.PUBLICATION);
  }

  /**
   * Returns pgjdbc's connection properties: user, password and any other given.
   *
   * @return a new copy, which the caller may change
   */
  public Properties properties() {
    Properties p = new Properties();
    p.putAll(connectionProperties);
    return p;
  }

  /** Returns the checkpoint store; never null. */
  public CdcCheckpointStore store() {
    return store;
  }

  /** Returns the cap of the position confirmed to PostgreSQL, or null for none. */
  public Supplier<PgLsn> confirmedFlushLimit() {
    return confirmedFlushLimit;
  }

  /** Returns the options and their values, the password masked. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("SourceConfiguration{");
    for (SourceOption<?> o : SourceOptions.all()) {
      if (values.containsKey(o)) {
        b.append(o.name()).append('=').append(o.format(values.get(o))).append(", ");
      }
    }
    b.setLength(b.length() - 2);
    return b.append('}').toString();
  }
}
