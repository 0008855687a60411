/* GStreamer SPDL: AWS credentials and profile settings, as botocore finds them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_AWS_CREDENTIALS_H__
#define __GST_SPDL_AWS_CREDENTIALS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* One set of credentials. The strings are secrets except @source: never
 * print them; free clears them from memory. */
typedef struct
{
  gchar *access_key;
  gchar *secret_key;
  gchar *session_token;         /* NULL if none */
  gint64 expiration;            /* unix seconds; 0: does not expire */
  /* where they came from, for messages (no secret): "the spdlsrc
   * properties", "environment (AWS_ACCESS_KEY_ID)", "profile \"dev\" in
   * /root/.aws/credentials", "container credentials
   * (AWS_CONTAINER_CREDENTIALS_FULL_URI)", "instance metadata (IMDSv2)" */
  gchar *source;
} GstSpdlAwsCredentials;

GstSpdlAwsCredentials *gst_spdl_aws_credentials_copy (
    const GstSpdlAwsCredentials * credentials);
void gst_spdl_aws_credentials_free (GstSpdlAwsCredentials * credentials);

/* What the user set explicitly (element properties); NULL or empty: not
 * set. The strings are copied. */
typedef struct
{
  const gchar *access_key;
  const gchar *secret_key;
  const gchar *session_token;
  /* as boto3.Session(profile_name=): the environment's keys are then not
   * read, and the profile must exist */
  const gchar *profile;
} GstSpdlAwsCredentialsConfig;

/* botocore's credential chain, the parts users meet, in its order:
 *  1. the config's access key and secret key (and session token);
 *  2. AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SECURITY_TOKEN or
 *     AWS_SESSION_TOKEN, AWS_CREDENTIAL_EXPIRATION (skipped when the config
 *     names a profile);
 *  3. the profile's role_arn: AssumeRole with STS, signed with the
 *     credentials of its source_profile (its keys, its web identity, or
 *     the role it assumes in turn) or credential_source (Environment,
 *     EcsContainer, Ec2InstanceMetadata); external_id, duration_seconds,
 *     role_session_name (else "botocore-session-<unix time>"); STS at
 *     AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, the profile's (services
 *     section's sts block, endpoint_url), else the region's
 *     (AWS_REGION, AWS_DEFAULT_REGION, the profile's) or the global one;
 *     mfa_serial is refused (no prompt);
 *  4. web identity: AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN,
 *     AWS_ROLE_SESSION_NAME (not read for the config's profile), else the
 *     profile's web_identity_token_file, role_arn, role_session_name:
 *     AssumeRoleWithWebIdentity, unsigned, the file read each time;
 *  5. the profile's aws_access_key_id, aws_secret_access_key and
 *     aws_session_token in the shared credentials file
 *     (AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials: "[NAME]"), then in
 *     the config file (AWS_CONFIG_FILE, ~/.aws/config: "[profile NAME]",
 *     "[default]"); the profile: the config's, AWS_DEFAULT_PROFILE,
 *     AWS_PROFILE, else "default";
 *  6. container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on
 *     http://169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI (https,
 *     or http on a loopback address or the ECS/EKS agents' addresses), with
 *     the Authorization of AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or
 *     AWS_CONTAINER_AUTHORIZATION_TOKEN;
 *  7. EC2 instance metadata, IMDSv2 (IMDSv1 where the token request is
 *     refused with 403, 404 or 405), 1 s per request: not used with
 *     AWS_EC2_METADATA_DISABLED=true; AWS_EC2_METADATA_SERVICE_ENDPOINT,
 *     AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE, AWS_METADATA_SERVICE_TIMEOUT,
 *     AWS_METADATA_SERVICE_NUM_ATTEMPTS, AWS_EC2_METADATA_V1_DISABLED and
 *     their profile keys tune it.
 * The environment and files are read at the first lookup, not at new().
 * Every lookup runs on a thread of the provider's own, one at a time, so
 * that a slow metadata server holds up nobody who need not wait.
 * Thread-safe. */
typedef struct _GstSpdlAwsCredentialsProvider GstSpdlAwsCredentialsProvider;

GstSpdlAwsCredentialsProvider *gst_spdl_aws_credentials_provider_new (
    const GstSpdlAwsCredentialsConfig * config);

/* Temporary credentials (roles, web identity, container, instance
 * metadata, AWS_CREDENTIAL_EXPIRATION) are fetched again from the same
 * place:
 *  - in the last 15 minutes before they expire (botocore's advisory
 *    refresh), in the background: the current ones are returned meanwhile
 *    and, while that fails, until they expire (a warning each time); a
 *    place that keeps answering with credentials this close to their end
 *    (instance metadata hands out new ones 5 minutes before) is asked
 *    again every 30 s;
 *  - in the last minute (the mandatory refresh; botocore's is at 10
 *    minutes, where its callers block): the current ones count as expired,
 *    a signature made now could reach S3 after them (and clocks differ),
 *    so callers wait for new ones.
 * GST_SPDL_AWS_CREDENTIALS_REFRESH_S and _EXPIRY_S are these margins. */
#define GST_SPDL_AWS_CREDENTIALS_REFRESH_S (15 * 60)
#define GST_SPDL_AWS_CREDENTIALS_EXPIRY_S 60

typedef enum
{
  GST_SPDL_AWS_CREDENTIALS_READY,       /* credentials, or an error */
  GST_SPDL_AWS_CREDENTIALS_PENDING      /* being looked up: ask again once
                                         * the provider notifies */
} GstSpdlAwsCredentialsStatus;

/* Called on the provider's thread, with its lock held, when a lookup has
 * ended: it must not call the provider; it is meant to wake up whoever
 * got GST_SPDL_AWS_CREDENTIALS_PENDING. */
typedef void (*GstSpdlAwsCredentialsNotify) (gpointer user_data);

/* Set before the first get: not thread-safe. */
void gst_spdl_aws_credentials_provider_set_notify (
    GstSpdlAwsCredentialsProvider * provider,
    GstSpdlAwsCredentialsNotify notify, gpointer user_data);

/* Without waiting: READY with @credentials (a copy the caller frees) or
 * with @error as for get(); or PENDING when there are none that are
 * valid yet and a lookup is under way (started now if needed). Never
 * waits for the network or a file. */
GstSpdlAwsCredentialsStatus gst_spdl_aws_credentials_provider_try_get (
    GstSpdlAwsCredentialsProvider * provider,
    GstSpdlAwsCredentials ** credentials, GError ** error);

/* As try_get(), waiting for a lookup when there are no valid credentials:
 * the current credentials, a copy the caller frees.
 * NULL and @error when there are none:
 *  - GST_RESOURCE_ERROR_NOT_FOUND: no place had any; the message names
 *    every place looked at. Callers may go on anonymously.
 *  - GST_RESOURCE_ERROR_SETTINGS: a place is set up wrongly (a named
 *    profile that does not exist, a key without its secret, a container
 *    URI on a host not allowed...), where botocore raises.
 *  - GST_RESOURCE_ERROR_NOT_AUTHORIZED: STS refused to assume the role
 *    (401, 403: AccessDenied...); the message has its error code.
 *  - GST_RESOURCE_ERROR_READ: the container credentials or the role's
 *    could not be fetched (botocore raises too), or the place answered with
 *    credentials that expired already (botocore: "the refreshed
 *    credentials are still expired").
 * A failed lookup is not repeated for 30 seconds: calls meanwhile return
 * its error at once. Messages never hold a secret. */
GstSpdlAwsCredentials *gst_spdl_aws_credentials_provider_get (
    GstSpdlAwsCredentialsProvider * provider, GError ** error);

/* Ends a lookup under way (its HTTP requests are cancelled) and waits for
 * its thread. */
void gst_spdl_aws_credentials_provider_free (
    GstSpdlAwsCredentialsProvider * provider);

/* A setting of @profile (NULL: AWS_DEFAULT_PROFILE, AWS_PROFILE, else
 * "default") as botocore reads it: the config file's profile section, its
 * keys overridden by the credentials file's section of that name; NULL
 * when not set (or empty). @key as in the files, lowercase: "region",
 * "endpoint_url"...
 * "endpoint_url" is S3's configured endpoint: the s3 block of the
 * profile's services section ("services = NAME", then
 *   [services NAME]
 *   s3 =
 *     endpoint_url = http://127.0.0.1:9000
 * ), else the profile's endpoint_url; NULL when
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or the profile's
 * ignore_configured_endpoint_urls is true. botocore's order for the
 * endpoint is AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, then this; for the
 * region AWS_DEFAULT_REGION, then "region". */
gchar *gst_spdl_aws_profile_get (const gchar * profile, const gchar * key);

G_END_DECLS

#endif /* __GST_SPDL_AWS_CREDENTIALS_H__ */
