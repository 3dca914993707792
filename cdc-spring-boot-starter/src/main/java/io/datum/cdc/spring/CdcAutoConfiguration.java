package io.datum.cdc.spring;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.CdcHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Auto-configures a {@link PgCdcSource} from {@code datum.cdc.*}, runs it with the application's
 * {@link CdcHandler} bean in a {@link PgCdcSourceLifecycle}, and registers its health indicator
 * and, with cdc-micrometer and Micrometer present, its meters. Every bean backs off when the
 * application defines its own.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnClass(PgCdcSource.class)
@ConditionalOnProperty(prefix = "datum.cdc", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(CdcProperties.class)
public class CdcAutoConfiguration {

  private static final Logger log = LoggerFactory.getLogger(CdcAutoConfiguration.class);

  /** Creates the auto-configuration. */
  public CdcAutoConfiguration() {}

  /**
   * The checkpoint store from {@code datum.cdc.checkpoint-store} (a URI), {@code memory:} when
   * unset.
   *
   * @param properties the bound properties
   * @return the opened store; closed with the context
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public CdcCheckpointStore cdcCheckpointStore(CdcProperties properties) {
    String uri = properties.getCheckpointStore();
    if (uri == null || uri.isBlank()) {
      log.warn(
          "datum-cdc: datum.cdc.checkpoint-store is not set: using memory:, so a restart"
              + " starts again from the slot (set it to file:/dir, rocksdb:/dir or mapdb:/file)");
      uri = "memory:";
    }
    return CheckpointStores.open(uri);
  }

  /**
   * The source, built from the properties and the store bean; closed with the context.
   *
   * @param properties the bound properties
   * @param store the checkpoint store bean
   * @param environment where options without a field of the properties are read
   * @return the source, not started
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public PgCdcSource pgCdcSource(
      CdcProperties properties, CdcCheckpointStore store, Environment environment) {
    return PgCdcSourceFactory.builder(properties, store, environment).build();
  }

  /**
   * Runs the source with the application's handler.
   *
   * @param source the source
   * @param handlers the application's {@link CdcHandler} bean
   * @param properties the bound properties
   * @return the lifecycle
   * @throws NoSuchBeanDefinitionException naming CdcHandler when the application has none
   */
  @Bean
  @ConditionalOnMissingBean
  public PgCdcSourceLifecycle pgCdcSourceLifecycle(
      PgCdcSource source, ObjectProvider<CdcHandler> handlers, CdcProperties properties) {
    CdcHandler handler = handlers.getIfUnique();
    if (handler == null) {
      throw new NoSuchBeanDefinitionException(
          CdcHandler.class,
          "datum-cdc needs exactly one bean of type io.datum.cdc.event.CdcHandler to deliver the"
              + " changes of slot "
              + source.slot()
              + " to (found "
              + handlers.stream().count()
              + "); define one, or set datum.cdc.enabled=false");
    }
    return new PgCdcSourceLifecycle(source, handler, properties);
  }

  /** The health indicator, with Spring Boot Actuator present. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  static class HealthConfiguration {

    /**
     * The {@code datumCdc} health indicator.
     *
     * @param lifecycle the running source
     * @param properties the bound properties
     * @return the indicator
     */
    @Bean(name = "datumCdcHealthIndicator")
    @ConditionalOnMissingBean(name = "datumCdcHealthIndicator")
    @ConditionalOnEnabledHealthIndicator("datum-cdc")
    @ConditionalOnProperty(prefix = "datum.cdc.health", name = "enabled", matchIfMissing = true)
    PgCdcSourceHealthIndicator datumCdcHealthIndicator(
        PgCdcSourceLifecycle lifecycle, CdcProperties properties) {
      return new PgCdcSourceHealthIndicator(lifecycle, properties.getHealth());
    }
  }
}
