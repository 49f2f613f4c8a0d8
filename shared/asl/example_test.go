package asl_test

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/asl"
)

type order struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
}

type receipt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// OutOfStock is a named error type: its name is what Catch matches.
type OutOfStock struct{ Item string }

func (e *OutOfStock) Error() string { return e.Item + " is out of stock" }

func Example() {
	definition := []byte(`{
	  "StartAt": "Charge",
	  "States": {
	    "Charge": {
	      "Type": "Task",
	      "Resource": "${ChargeFunctionArn}",
	      "Parameters": {"id.$": "$.id", "amount.$": "$.amount"},
	      "ResultPath": "$.receipt",
	      "Catch": [{"ErrorEquals": ["OutOfStock"], "ResultPath": "$.error", "Next": "Sorry"}],
	      "Next": "Big?"
	    },
	    "Big?": {
	      "Type": "Choice",
	      "Choices": [{"Variable": "$.amount", "NumericGreaterThan": 100, "Next": "Big"}],
	      "Default": "Small"
	    },
	    "Big": {"Type": "Pass", "Result": "big order", "End": true},
	    "Small": {"Type": "Pass", "Result": "small order", "End": true},
	    "Sorry": {"Type": "Pass", "InputPath": "$.error", "End": true}
	  }
	}`)
	sm, err := asl.Parse(definition, map[string]string{"ChargeFunctionArn": "local:charge"})
	if err != nil {
		fmt.Println(err)
		return
	}
	charge := func(_ context.Context, o order) (receipt, error) {
		if o.ID == "o-3" {
			return receipt{}, &OutOfStock{Item: "kite"}
		}
		return receipt{ID: o.ID, Status: "paid"}, nil
	}
	exec, err := asl.NewExecutor(sm, map[string]asl.TaskFunc{"local:charge": asl.Handler(charge)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range []order{{"o-1", 250}, {"o-2", 20}, {"o-3", 5}} {
		out, err := exec.Run(context.Background(), o.ID, o)
		fmt.Println(o.ID, out.Status, string(out.Output), err)
	}
	// Output:
	// o-1 SUCCEEDED "big order" <nil>
	// o-2 SUCCEEDED "small order" <nil>
	// o-3 SUCCEEDED {"Cause":"kite is out of stock","Error":"OutOfStock"} <nil>
}
