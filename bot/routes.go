package bot

import (
	"net/http"

	"github.com/streamwatch/streamwatch/integrations/alerts"
)

// Routes lists every HTTP route streamwatch serves.
func (b *Bot) Routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/alertmanager", b.webhook("alertmanager", alerts.DecodeAlertmanager))
	mux.Handle("POST /webhooks/grafana", b.webhook("grafana", alerts.DecodeGrafana))
	mux.Handle("POST /webhooks/generic", b.webhook("generic", alerts.DecodeGeneric))
	mux.HandleFunc("GET /healthz", b.healthz)
	mux.HandleFunc("GET /readyz", b.readyz)
	mux.Handle("GET /metrics", b.opt.Metrics.Handler())
	return mux
}
