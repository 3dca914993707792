package io.datum.cdc.spring;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.lang.reflect.Field;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
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
   * @throws IllegalStateException naming the property when jdbc-url, slot or publication is unset,
   *     or naming every {@code datum.cdc.*} property of the environment that nothing binds
   * @throws io.datum.cdc.CdcConfigurationException naming the option when a value is refused
   */
  public static PgCdcSource.Builder builder(
      CdcProperties p, CdcCheckpointStore store, Environment environment) {
    require(p.getJdbcUrl(), "datum.cdc.jdbc-url");
    require(p.getSlot(), "datum.cdc.slot");
    require(p.getPublication(), "datum.cdc.publication");
    if (environment != null) {
      refuseUnknownProperties(environment);
    }
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
   * Returns the property of an option under {@code datum.cdc.}: its declared name, as in every
   * other mirror ({@code snapshot-modes}, {@code reconnect-max-backoff}).
   *
   * @param option the option
   * @return the property's name without the prefix, as in application.properties
   */
  public static String property(SourceOption<?> option) {
    return option.name();
  }

  /**
   * The bean path of an option's property in {@link CdcProperties}: {@code reconnectMaxBackoff}.
   */
  private static String beanPath(SourceOption<?> option) {
    return SourceOption.camelCase(property(option));
  }

  /**
   * Refuses every {@code datum.cdc.*} property of the environment that nothing binds: a misspelt or
   * renamed property would otherwise be ignored without a word (an initial snapshot never taken).
   * Names compare in Spring's relaxed form ({@code snapshot-modes}, {@code snapshotModes}, {@code
   * DATUM_CDC_SNAPSHOTMODES} are one name).
   *
   * @param environment the environment the properties were bound from
   * @throws IllegalStateException naming each such property, and the property it resembles if one
   */
  static void refuseUnknownProperties(Environment environment) {
    Set<String> known = new HashSet<>();
    // the properties are the fields (each has its getter and setter)
    for (Field f : CdcProperties.class.getDeclaredFields()) {
      known.add(uniform(f.getName()));
    }
    for (Field f : CdcProperties.Health.class.getDeclaredFields()) {
      known.add("health." + uniform(f.getName()));
    }
    for (SourceOption<?> o : SourceOptions.all()) {
      known.add(uniform(o.name()));
    }
    // datum-cdc's own system properties for its build and test kit share the prefix
    known.addAll(Set.of("regenerate", "embedded", "postgres", "testkit"));
    ConfigurationPropertyName prefix = ConfigurationPropertyName.of("datum.cdc");
    Set<String> unknown = new TreeSet<>();
    for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
      if (!(source instanceof IterableConfigurationPropertySource iterable)) {
        continue;
      }
      iterable.stream()
          .filter(prefix::isAncestorOf)
          .forEach(
              name -> {
                String first = name.getElement(2, ConfigurationPropertyName.Form.UNIFORM);
                String path =
                    first.equals("health") && name.getNumberOfElements() > 3
                        ? "health." + name.getElement(3, ConfigurationPropertyName.Form.UNIFORM)
                        : first;
                if (!known.contains(path)) {
                  StringBuilder joined = new StringBuilder();
                  for (int i = 2; i < name.getNumberOfElements(); i++) {
                    joined.append(name.getElement(i, ConfigurationPropertyName.Form.UNIFORM));
                  }
                  String like =
                      SourceOptions.all().stream()
                          .filter(o -> uniform(o.name()).equals(joined.toString()))
                          .map(o -> " (did you mean datum.cdc." + o.name() + "?)")
                          .findFirst()
                          .orElse("");
                  unknown.add(name + like);
                }
              });
    }
    if (!unknown.isEmpty()) {
      throw new IllegalStateException(
          "datum-cdc: "
              + String.join(", ", unknown)
              + (unknown.size() == 1 ? " is no property" : " are no properties")
              + " of datum-cdc and would be ignored; correct or remove "
              + (unknown.size() == 1 ? "it" : "them")
              + " (the options are datum.cdc.<option> with the names of docs/configuration.md)");
    }
  }

  /** A property name in Spring's uniform form: lower case, letters and digits only. */
  private static String uniform(String name) {
    return name.replaceAll("[^A-Za-z0-9]", "").toLowerCase(Locale.ROOT);
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
