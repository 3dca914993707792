/**
 * Spring Boot auto-configuration for datum-cdc: a {@link io.datum.cdc.core.PgCdcSource} from {@code
 * datum.cdc.*} properties, run with the application's {@link io.datum.cdc.event.CdcHandler} bean,
 * with a health indicator and meters.
 */
package io.datum.cdc.spring;
