/**
 * Spring Boot auto-configuration of a datum-cdc source ({@link
 * io.datum.cdc.spring.CdcAutoConfiguration}): a {@code PgCdcSource} from {@code datum.cdc.*}
 * properties, run with the application context, its health and meters. Spring's jars are automatic
 * modules; the actuator, Micrometer and {@code cdc-micrometer} are optional ({@code requires
 * static}), as in the POM. Spring creates and proxies the configuration classes reflectively.
 */
module io.datum.cdc.spring {
  requires transitive io.datum.cdc.core;
  requires spring.beans;
  requires spring.boot;
  requires spring.boot.autoconfigure;
  requires spring.context;
  requires spring.core;
  requires org.slf4j;
  requires static spring.boot.actuator;
  requires static spring.boot.actuator.autoconfigure;
  requires static io.datum.cdc.micrometer;
  requires static micrometer.core;

  exports io.datum.cdc.spring;

  // @Configuration classes are subclassed (CGLIB) and @ConfigurationProperties bound reflectively
  opens io.datum.cdc.spring;
}
