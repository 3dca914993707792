/**
 * Micrometer meters for datum-cdc: {@link io.datum.cdc.micrometer.PgCdcSourceMetrics} binds a
 * source's figures to a registry, {@link io.datum.cdc.micrometer.TimedCheckpointStore} times a
 * checkpoint store. Micrometer itself is the application's (a provided dependency). Meters:
 * docs/metrics.md.
 */
package io.datum.cdc.micrometer;
