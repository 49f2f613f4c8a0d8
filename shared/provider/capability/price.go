package capability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/settings"
)

// A Priced is one provider model: what it accepts and what a second of
// its video costs. Every backend's table prices its models with it, and
// CheckPrices is the one check that no start sells below that cost.
type Priced struct {
	// ID is the provider's model id, for messages.
	ID     string
	Limits Limits
	// Audio and Silent are the price of a second of video by resolution,
	// with audio and without. A provider that bills audio always has
	// both the same.
	Audio, Silent map[string]float64
}

// Cost is the provider's price of one video of d seconds at res.
func (m Priced) Cost(res string, d int, audio bool) (float64, bool) {
	prices := m.Silent
	if audio {
		prices = m.Audio
	}
	p, ok := prices[res]
	return p * float64(d), ok
}

// CheckPrices fails when one of our models, on the provider model route
// gives for it (ok false: none is known), is sold below its cost at
// creditUSD a credit, for any start the backend accepts for it: every
// duration, every resolution of the catalog the provider renders at
// that duration, and every value of generateAudio its audio rule takes.
// The error lists every such start.
func CheckPrices(backend string, route func(model string) (Priced, bool), creditUSD float64) error {
	return CheckPricesOf(catalog.IDs(), backend, route, creditUSD)
}

// CheckPricesOf is CheckPrices for some of our models only: those a
// provider route serves (settings.Routes).
func CheckPricesOf(models []string, backend string, route func(model string) (Priced, bool), creditUSD float64) error {
	var losses []string
	for _, ours := range catalog.All() {
		if !slices.Contains(models, ours.ID) {
			continue
		}
		m, ok := route(ours.ID)
		if !ok {
			losses = append(losses, fmt.Sprintf("%s: %q has no price on %s", ours.ID, m.ID, backend))
			continue
		}
		for d, resolutions := range m.Limits.ResolutionsOf(ours.ID) {
			for _, res := range resolutions {
				for _, audio := range m.Limits.Audio.AudioChoices() {
					cost, ok := m.Cost(res, d, audio)
					income := float64(ours.Price(audio)) * creditUSD
					if !ok || income < cost {
						losses = append(losses, fmt.Sprintf("%s on %s: %d s at %s %s costs $%.2f, sold for %d credits = $%.2f",
							ours.ID, m.ID, d, res, audioWord(audio), cost, ours.Price(audio), income))
					}
				}
			}
		}
	}
	if len(losses) > 0 {
		slices.Sort(losses)
		return fmt.Errorf("at %s=%g, %s sells below cost: %s", settings.CreditUSD, creditUSD, backend, strings.Join(losses, "; "))
	}
	return nil
}

func audioWord(audio bool) string {
	if audio {
		return "with audio"
	}
	return "without audio"
}

// Served is what a provider route's backend accepts for each of the
// models it serves (settings.Routes), priced by priced: a model the
// backend's table does not know, or one sold below its cost at
// creditUSD (CheckPricesOf), is an error. Each adapter's table reads
// its own route with it, so that the check is written once.
func Served(served []string, backend string, priced func(ours string) (Priced, bool), creditUSD float64) (map[string]Limits, error) {
	out := map[string]Limits{}
	for _, ours := range served {
		m, ok := priced(ours)
		if !ok {
			return nil, fmt.Errorf("%s maps %s to %q, which is not a model of %s this service knows", settings.Routes, ours, m.ID, backend)
		}
		out[ours] = m.Limits
	}
	if err := CheckPricesOf(served, backend, priced, creditUSD); err != nil {
		return nil, err
	}
	return out, nil
}
