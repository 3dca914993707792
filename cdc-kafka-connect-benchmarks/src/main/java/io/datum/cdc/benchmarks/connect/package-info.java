/**
 * Changes per second into Kafka of datum-cdc's Kafka Connect source connector and Debezium's
 * PostgreSQL connector on one in-JVM Connect cluster: {@link
 * io.datum.cdc.benchmarks.connect.ConnectHarness}.
 */
package io.datum.cdc.benchmarks.connect;
