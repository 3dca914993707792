package io.datum.cdc.spring;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Turns {@link CdcProperties} into a {@link PgCdcSource.Builder}; unset options keep defaults. Each
 * source option is read from its property by the option's declaration ({@link SourceOptions}), not
 * by a call per option.
 */
public final class PgCdcSourceFactory {

  private PgCdcSourceFactory() {}

  /**
   * Returns a builder with every property that is set applied, and the given store.
   *
   * @param p the bound properties
   * @param store the checkpoint store the source uses
   * @return the builder, not yet built
   * @throws IllegalStateException naming the property when jdbc-url, slot or publication is unset
   */
  public static PgCdcSource.Builder builder(CdcProperties p, CdcCheckpointStore store) {
    return builder(p, store, null);
  }

  /**
   * Returns a builder with every property that is set applied, and the given store; an option
   * without a field of {@link CdcProperties} (one added since) is bound by its property name from
   * the environment, as text its declaration parses.
   *
   * @param p the bound properties
   * @param store the checkpoint store the source uses
   * @param environment where options without a field are read; null to read none
   * @return the builder, not yet built
   * @throws IllegalStateException naming the property when jdbc-url, slot or publication is unset
   * @throws io.datum.cdc.CdcConfigurationException naming the option when a value is refused
   */
  public static PgCdcSource.Builder builder(
      CdcProperties p, CdcCheckpointStore store, Environment environment) {
    require(p.getJdbcUrl(), "datum.cdc.jdbc-url");
    require(p.getSlot(), "datum.cdc.slot");
    require(p.getPublication(), "datum.cdc.publication");
    PgCdcSource.Builder b = PgCdcSource.builder().checkpointStore(store);
    BeanWrapper bean = new BeanWrapperImpl(p);
    for (SourceOption<?> o : SourceOptions.all()) {
      if (!bean.isReadableProperty(beanPath(o))) {
        if (environment != null) {
          Binder.get(environment)
              .bind("datum.cdc." + property(o), String.class)
              .ifBound(text -> b.option(o.name(), text));
        }
        continue;
      }
      Object value = bean.getPropertyValue(beanPath(o));
      if (value instanceof List<?> list && o.kind() == SourceOption.Kind.ENUM_SET) {
        value = list.isEmpty() ? null : Set.copyOf(list);
      }
      if (value != null && !(value instanceof List<?> l && l.isEmpty())) {
        set(b, o, value);
      }
    }
    p.getConnectionProperties().forEach(b::connectionProperty);
    return b;
  }

  /**
   * Returns the property of an option, under {@code datum.cdc.}: its name, but for the options
   * grouped under {@code reconnect.} and {@code snapshot.}, and {@code tables}.
   *
   * @param option the option
   * @return the property's name without the prefix, as in application.properties
   */
  public static String property(SourceOption<?> option) {
    return GROUPED.getOrDefault(option, option.name());
  }

  private static final Map<SourceOption<?>, String> GROUPED =
      Map.of(
          SourceOptions.PUBLICATION_TABLES, "tables",
          SourceOptions.RECONNECT_ATTEMPTS, "reconnect.attempts",
          SourceOptions.RECONNECT_INITIAL_BACKOFF, "reconnect.initial-backoff",
          SourceOptions.RECONNECT_MAX_BACKOFF, "reconnect.max-backoff",
          SourceOptions.SNAPSHOT_MODES, "snapshot.modes",
          SourceOptions.SNAPSHOT_PARALLELISM, "snapshot.parallelism",
          SourceOptions.SNAPSHOT_CHUNK_ROWS, "snapshot.chunk-rows");

  /**
   * The bean path of an option's property in {@link CdcProperties}: {@code reconnect.maxBackoff}.
   */
  private static String beanPath(SourceOption<?> option) {
    return SourceOption.camelCase(property(option));
  }

  @SuppressWarnings("unchecked")
  private static <T> void set(PgCdcSource.Builder b, SourceOption<T> option, Object value) {
    b.option(option, (T) value);
  }

  private static void require(String value, String property) {
    if (value == null || value.isBlank()) {
      throw new IllegalStateException(
          "datum-cdc: the property " + property + " is not set (or set datum.cdc.enabled=false)");
    }
  }
}
