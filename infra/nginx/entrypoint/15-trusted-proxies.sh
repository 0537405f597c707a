#!/bin/sh
# Warns at the gateway's start when TRUSTED_PROXIES (the peers whose X-Forwarded-For names the
# client, see templates/gateway.conf.template) holds a range of more than 65,536 addresses (wider
# than an IPv4 /16 or an IPv6 /112): every host in such a range may choose the client address
# that the gateway, the services' rate limits and their logs see. A warning, never a stop.
# Run by the nginx image's entrypoint before it renders the template (compose, Kubernetes,
# infra/nginx/Dockerfile) and by `npm start`'s gateway (packages/devstack/src/nginx.ts), which
# passes a comma list.
set -eu
set -f
for range in $(printf '%s' "${TRUSTED_PROXIES:-}" | tr ',' ' '); do
  case "$range" in
    */*) bits=${range##*/} ;;
    *) continue ;; # one address, or `unix:` (no proxy)
  esac
  case "$bits" in
    '' | *[!0-9]*) continue ;;
  esac
  case "$range" in
    *:*) widest=112 ;;
    *) widest=16 ;;
  esac
  if [ "$bits" -lt "$widest" ]; then
    echo "gateway: warning: TRUSTED_PROXIES range $range holds more than 65,536 addresses (wider than a /$widest): any host in it can choose the client address the gateway and the services see; name only the proxy in front (the Ingress controller's pod range)" >&2
  fi
done
