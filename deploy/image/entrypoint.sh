#!/bin/sh
# The image's entry point (run under tini, as the unprivileged user `referee`): `referee serve`
# on every address of the container, its store, records and admin token in the volume
# /var/lib/referee. The admin token comes from a file, never from the environment or argv: a
# mounted secret /run/secrets/referee_admin_token when there is one, else the volume's
# admin.token (generated, mode 0600, on the first start and kept across restarts).
# Arguments after the image name are added to `referee serve`'s (e.g. --http-port 8080).
set -eu
unset REFEREE_ADMIN_TOKEN  # a token in the environment is visible to `podman inspect`
secret=/run/secrets/referee_admin_token
if [ -r "$secret" ]; then
    set -- --admin-token-file "$secret" "$@"
fi
exec /opt/referee/bin/referee serve --host 0.0.0.0 --port 50051 \
    --data-dir /var/lib/referee --log-format json "$@"
