package io.datum.cdc.spring;

import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.micrometer.PgCdcSourceMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Binds the source's meters ({@link PgCdcSourceMetrics} of cdc-micrometer) when that module and
 * Micrometer are on the class path; Spring Boot binds every MeterBinder bean to its registries.
 */
@AutoConfiguration(after = CdcAutoConfiguration.class)
@ConditionalOnClass(
    name = {
      "io.datum.cdc.micrometer.PgCdcSourceMetrics",
      "io.micrometer.core.instrument.MeterRegistry"
    })
@ConditionalOnBean(PgCdcSource.class)
public class CdcMetricsAutoConfiguration {

  /** Creates the auto-configuration. */
  public CdcMetricsAutoConfiguration() {}

  /**
   * The meters of the source; closed with the context.
   *
   * @param source the source
   * @return the binder
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public PgCdcSourceMetrics pgCdcSourceMetrics(PgCdcSource source) {
    return PgCdcSourceMetrics.builder(source).build();
  }
}
