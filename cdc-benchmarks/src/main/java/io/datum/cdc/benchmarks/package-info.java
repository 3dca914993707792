/**
 * JMH benchmarks of datum-cdc, built into {@code cdc-benchmarks/target/benchmarks.jar}: {@code
 * coordinator} (acknowledgement throughput and allocation, against Kafka Connect's {@code
 * SubmittedRecords}) and {@code store} (durable checkpoint latency and throughput). Not published.
 */
package io.datum.cdc.benchmarks;
