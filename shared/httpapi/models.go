package httpapi

import (
	"net/http"

	"github.com/genvideo/gen/shared/service"
)

type modelsResponse struct {
	Success      bool    `json:"success"`
	Models       []model `json:"models"`
	DefaultModel string  `json:"defaultModel"`
}

type model struct {
	ModelID      string   `json:"modelId"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	Pricing      pricing  `json:"pricing"`
}

type pricing struct {
	CreditsPerVideo        int `json:"creditsPerVideo"`
	CreditsPerVideoNoAudio int `json:"creditsPerVideoNoAudio"`
}

func (a *API) models(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	all, def := a.svc.Models()
	resp := modelsResponse{Success: true, DefaultModel: def}
	for _, m := range all {
		resp.Models = append(resp.Models, model{
			ModelID:      m.ID,
			Name:         m.Name,
			Description:  m.Description,
			Capabilities: m.Capabilities,
			Pricing:      pricing{CreditsPerVideo: m.CreditsPerVideo, CreditsPerVideoNoAudio: m.CreditsPerVideoNoAudio},
		})
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
