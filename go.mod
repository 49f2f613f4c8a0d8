module github.com/genvideo/gen

go 1.26
