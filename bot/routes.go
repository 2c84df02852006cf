package bot

import (
	"net/http"

	"github.com/streamwatch/streamwatch/integrations/alerts"
)

// Routes lists every HTTP route streamwatch serves, on one address (http.listen when
// http.metrics_listen is empty).
func (b *Bot) Routes() http.Handler {
	mux := http.NewServeMux()
	b.webhookRoutes(mux)
	b.opsRoutes(mux)
	return mux
}

// WebhookRoutes are the alert webhooks alone: http.listen when http.metrics_listen is set, so
// the address alert senders reach does not expose the metrics.
func (b *Bot) WebhookRoutes() http.Handler {
	mux := http.NewServeMux()
	b.webhookRoutes(mux)
	return mux
}

// OpsRoutes are the routes for Prometheus and the orchestrator: http.metrics_listen.
func (b *Bot) OpsRoutes() http.Handler {
	mux := http.NewServeMux()
	b.opsRoutes(mux)
	return mux
}

func (b *Bot) webhookRoutes(mux *http.ServeMux) {
	mux.Handle("POST /webhooks/alertmanager", b.webhook("alertmanager", alerts.DecodeAlertmanager))
	mux.Handle("POST /webhooks/grafana", b.webhook("grafana", alerts.DecodeGrafana))
	mux.Handle("POST /webhooks/generic", b.webhook("generic", alerts.DecodeGeneric))
}

func (b *Bot) opsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", b.healthz)
	mux.HandleFunc("GET /readyz", b.readyz)
	mux.Handle("GET /metrics", b.opt.Metrics.Handler())
}
